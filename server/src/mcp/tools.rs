//! The tools, `multiedit`, `multiedit_preview`, `multiedit_patch`, `multiedit_read` and
//! `multiedit_write` (`write.rs`), and the server that offers them.

use crate::refusal::{Kind, Refusal};
use std::path::PathBuf;
use std::sync::Arc;

use rmcp::model::{CallToolResult, Implementation, JsonObject, ServerCapabilities, ServerConfig};
use rmcp::service::RequestContext;
use rmcp::{tool, tool_handler, tool_router, RoleServer, ServerHandler};
use serde_json::Value;

use super::render::{self, internal};
use super::{read, symbols, write};
use crate::bridge::{self, Intent, Routed};
use crate::engine::{self, Plan};
use crate::formats::PatchRequest;
use crate::gate::{self, Access, Allow, Gate, Protected, Who, MCP_OPT_OUT};
use crate::language_servers;
use crate::paths::{self, Folders};
use crate::process::catch_panic;
use crate::result::{PlanResult, ReadResult};

// What a model reads of each tool. Most agents send every definition with every request, so each
// says what a model needs and no more (`tools/list` stays under 8 KB: `schema.rs`).

pub(crate) const MULTIEDIT_DESCRIPTION: &str = "\
Edit files by exact find-and-replace: edits to one file (file_path, edits) or several (files), applied as \
one change, every edit or none. Prefer it to rewriting files or sed.
- file_path is absolute. old_string is copied exactly from the file (indentation and line breaks \
included, no line-number prefixes) and must occur once unless replace_all: include enough lines to make \
it unique. Edits apply in order, each to the text the ones before left. An empty old_string in a missing \
file's first edit creates it.
- Or name a symbol (see multiedit_symbols): {symbol, replace: whole|body, new_string} or {symbol, \
insert: before|after, new_string}; rename: {file_path, symbol, new_name} renames it everywhere first. \
Both need a language server: an editor's, or one multiedit starts where the user allowed it.
Where such an editor holds the files, the plan lands in its buffers (unsaved changes included) and is \
saved where the user had none; else it is written to disk. The result says where, gives the new sha256s \
and the errors introduced: fix those. A refusal changes nothing; it gives the reason, the failing edit \
(from 0) and the closest text: fix the plan and send it whole again.";

pub(crate) const PREVIEW_DESCRIPTION: &str = "\
multiedit's checks without changing anything: give it the same plan; it answers with the unified diff \
the plan would make, or with the refusal multiedit would give.";

pub(crate) const PATCH_DESCRIPTION: &str = "\
Apply a patch as one change, every hunk or none: a unified diff (git diff: new, deleted and renamed files \
too), an apply_patch envelope (*** Begin Patch ... *** End Patch) or SEARCH/REPLACE blocks (the path on \
the line before <<<<<<< SEARCH, or file_path). Hunks are found by their lines, exactly. Relative paths \
start at root (default: this server's folder). Adding a file that exists is refused. Through an editor \
like multiedit; a refusal names the hunk and the closest text.";

pub(crate) const READ_DESCRIPTION: &str = "\
Read files as the user sees them: an editor's buffers, unsaved changes included, else the disk. Lines \
are numbered as cat -n numbers them (number and tab are not part of the line); limit lines (default \
2000) from offset. Each file gives its sha256 (multiedit_write asks for it) and says whether the editor's \
text differs from the disk.";

pub(crate) const SYMBOLS_DESCRIPTION: &str = "\
A file's outline from its language servers (the editor's that holds it, else one multiedit starts where \
the user allowed it): each symbol's kind, name path and lines. Use the name paths in multiedit's symbol edits and renames instead \
of reading the whole file.";

const INSTRUCTIONS: &str = "\
multiedit is an edit tool: where the agent's own Edit and Write are turned off, its tools are the edit \
tools. Load multiedit (exact edits to one or more files, all or none) and multiedit_read (files as the \
user's editor holds them) first; multiedit_write creates or replaces a file, multiedit_patch applies a \
diff or SEARCH/REPLACE blocks, multiedit_preview shows a plan's diff, multiedit_symbols a file's \
outline. Edits land in the user's editor when it holds the files, else on disk; each result says where.";

#[derive(Clone)]
pub(crate) struct Server {
    /// One plan at a time: two plans on one file in parallel would have the second refused as \"changed
    /// while the plan was being applied\"; in turn, the second one sees the first one's result.
    turn: Arc<tokio::sync::Mutex<()>>,
    /// The folders plans may touch, in an editor or on disk; `None`: anywhere (`--allow-outside`).
    confine: Option<Arc<Folders>>,
    /// What the user lets agents do beyond the gate's default (`--allow-dot-git`, `--allow-agent-config`).
    allow: Allow,
    /// The language servers this session started where no editor holds a plan's files, and the
    /// folders it works in (`language_servers`).
    servers: Arc<language_servers::Pool>,
    folders: Vec<PathBuf>,
}

impl Server {
    pub(crate) fn new(confine: Option<Folders>, allow: Allow) -> Server {
        let folders = match &confine {
            Some(f) => f.as_slice().to_vec(),
            None => std::env::current_dir().into_iter().collect(),
        };
        Server {
            turn: Arc::new(tokio::sync::Mutex::new(())),
            confine: confine.map(Arc::new),
            allow,
            servers: language_servers::Pool::for_session(),
            folders,
        }
    }

    /// What the language servers need of this server to serve a plan on disk.
    pub(super) fn context(&self) -> language_servers::Context {
        language_servers::Context {
            pool: self.servers.clone(),
            folders: self.folders.clone(),
            confine: self.confine.clone(),
            front: language_servers::Front::Mcp,
            allow: self.allow,
        }
    }

    /// Shuts down the language servers this session started.
    pub(crate) async fn shutdown(&self) {
        self.servers.shutdown().await;
    }

    /// The gate (`crate::gate`): everything that arrives over MCP is an agent's.
    fn gate(&self) -> Gate<'_> {
        Gate {
            who: Who::Agent,
            allow: self.allow,
            folders: self.confine.as_deref(),
        }
    }

    /// Refuses a path (`names`: as the request gives them) outside the folders the server may edit, or
    /// one the gate refuses; the protected files a write reaches, which need the user, are returned.
    fn confined<'n>(
        &self,
        access: Access,
        names: impl IntoIterator<Item = &'n str> + Clone,
    ) -> Result<Vec<Protected>, Refusal> {
        if let Some(folders) = &self.confine {
            type Confine = fn(&Folders, &str, &std::path::Path, &str, &str) -> Result<(), Refusal>;
            let (verb, confine): (&str, Confine) = match access {
                Access::Write | Access::Preview => ("edit", Folders::confine),
                Access::Read => ("read", Folders::confine_read),
            };
            let what = format!(
                "the folders this MCP server may {verb} ({})",
                folders.listed()
            );
            for name in names.clone() {
                confine(folders, name, &paths::to_path(name)?, &what, OPT_OUT)?;
            }
        }
        self.gate().judge(access, names, &MCP_OPT_OUT)
    }
}

/// How to widen what `multiedit mcp` may edit, for its refusals.
const OPT_OUT: &str =
    "By default it edits only inside the folder it was started in (the agent's project). To \
                       allow more, start it as `multiedit mcp --root DIR` (once per folder) or \
                       `multiedit mcp --allow-outside`, in the agent's MCP configuration.";

#[tool_router]
impl Server {
    #[tool(
        name = "multiedit",
        description = MULTIEDIT_DESCRIPTION,
        input_schema = super::schema::plan(),
        annotations(title = "Edit files")
    )]
    async fn multiedit(
        &self,
        arguments: JsonObject,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        if let Some(refusal) = read_only(&context) {
            return render::refusal(&refusal, None);
        }
        self.run(arguments, Intent::Apply, agent(&context)).await
    }

    #[tool(
        name = "multiedit_preview",
        description = PREVIEW_DESCRIPTION,
        input_schema = super::schema::preview(),
        annotations(title = "Preview edits", read_only_hint = true)
    )]
    async fn multiedit_preview(
        &self,
        arguments: JsonObject,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.run(arguments, Intent::Preview, agent(&context)).await
    }

    #[tool(
        name = "multiedit_read",
        description = READ_DESCRIPTION,
        input_schema = super::schema::read(),
        annotations(title = "Read files", read_only_hint = true)
    )]
    async fn multiedit_read(
        &self,
        arguments: JsonObject,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let value = Value::Object(arguments);
        let wanted = match catch_panic("multiedit_read", || read::request(&value)) {
            Ok(Ok(w)) => w,
            Ok(Err(refusal)) => return render::refusal(&refusal, None),
            Err(bug) => return internal(bug),
        };
        // Confined as a plan is: nothing of .git (unless allowed) nor of multiedit's private folders.
        if let Err(refusal) =
            self.confined(Access::Read, wanted.iter().map(|w| w.file_path.as_str()))
        {
            return render::refusal(&refusal, None);
        }
        let request = serde_json::json!({"files": wanted.iter().map(|w| serde_json::json!({"file_path": w.file_path})).collect::<Vec<_>>()});
        let files: Vec<PathBuf> = wanted.iter().map(|w| w.path.clone()).collect();
        let agent = agent(&context);
        let _turn = self.turn.lock().await;
        let allow = self.allow;
        let routed = tokio::spawn(async move {
            let sender = bridge::Sender {
                agent: agent.as_deref(),
                allow,
            };
            bridge::route_from::<ReadResult>(&request, &files, Intent::Read, sender).await
        })
        .await;
        match routed {
            Ok(Routed::Answered { editor, answer }) => render::with_earlier(
                read::render(&answer.files, &wanted, Some(&editor)),
                &answer.earlier_diagnostics,
            ),
            Ok(Routed::Refused { editor, refusal }) => render::refusal(&refusal, Some(&editor)),
            Ok(Routed::NoEditor { .. }) => {
                let (w, confine) = (wanted.clone(), self.confine.clone());
                let what = confine.as_ref().map(|f| format!("the folders this MCP server may read ({})", f.listed())).unwrap_or_default();
                match tokio::task::spawn_blocking(move || catch_panic("multiedit_read", || read::from_disk(&w, confine.as_deref(), &what, OPT_OUT))).await {
                    Ok(Ok(Ok(files))) => read::render(&files, &wanted, None),
                    Ok(Ok(Err(refusal))) => render::refusal(&refusal, None),
                    Ok(Err(bug)) => internal(bug),
                    Err(e) => internal(format!("multiedit hit an internal error in multiedit_read ({e}); please report it.")),
                }
            }
            // The disk may lack what an editor it cannot see holds: refused, as a plan is.
            Ok(Routed::Blind { refusal }) => render::refusal(&refusal, None),
            Err(e) => internal(format!("multiedit hit an internal error while reading through the editors ({e}). Please report it.")),
        }
    }

    #[tool(
        name = "multiedit_write",
        description = write::DESCRIPTION,
        input_schema = super::schema::write(),
        annotations(title = "Write a file")
    )]
    async fn multiedit_write(
        &self,
        arguments: JsonObject,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        if let Some(refusal) = read_only(&context) {
            return render::refusal(&refusal, None);
        }
        let value = Value::Object(arguments);
        let checked = catch_panic("multiedit_write", || -> Result<_, Refusal> {
            let request = crate::write::WriteRequest::from_value(&value)?;
            let plan = request.plan();
            let files = plan_paths(&plan)?;
            Ok((request, plan, files))
        });
        match checked {
            Ok(Ok((request, plan, files))) => {
                self.route(
                    value,
                    plan,
                    files,
                    Intent::Apply,
                    agent(&context),
                    Some(request),
                )
                .await
            }
            Ok(Err(refusal)) => render::refusal(&refusal, None),
            Err(bug) => internal(bug),
        }
    }

    #[tool(
        name = "multiedit_symbols",
        description = SYMBOLS_DESCRIPTION,
        input_schema = super::schema::symbols(),
        annotations(title = "File outline", read_only_hint = true)
    )]
    async fn multiedit_symbols(
        &self,
        arguments: JsonObject,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let (file_path, path) = match catch_panic("multiedit_symbols", || {
            symbols::request(&Value::Object(arguments))
        }) {
            Ok(Ok(wanted)) => wanted,
            Ok(Err(refusal)) => return render::refusal(&refusal, None),
            Err(bug) => return internal(bug),
        };
        if let Err(refusal) = self.confined(Access::Preview, [file_path.as_str()]) {
            return render::refusal(&refusal, None);
        }
        let _turn = self.turn.lock().await;
        symbols::call(file_path, path, agent(&context), self.context()).await
    }

    #[tool(
        name = "multiedit_patch",
        description = PATCH_DESCRIPTION,
        input_schema = super::schema::patch(),
        annotations(title = "Apply a patch")
    )]
    async fn multiedit_patch(
        &self,
        arguments: JsonObject,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let intent = if arguments
            .get("preview")
            .and_then(Value::as_bool)
            .unwrap_or(false)
        {
            Intent::Preview
        } else {
            Intent::Apply
        };
        if let (Intent::Apply, Some(refusal)) = (intent, read_only(&context)) {
            return render::refusal(&refusal, None);
        }
        let value = Value::Object(arguments);
        let checked = catch_panic(
            "multiedit_patch",
            || -> Result<(Value, Plan, Vec<PathBuf>), Refusal> {
                let request = PatchRequest::from_value(&value, &["preview"])?;
                if value.get("preview").is_some_and(|p| !p.is_boolean()) {
                    return Err(Refusal::input("`preview` must be true or false"));
                }
                let here = std::env::current_dir().map_err(|e| {
                    Refusal::new(Kind::Io, format!("Cannot read the current folder: {e}"))
                })?;
                let root = request.root.clone().unwrap_or(here);
                let plan = request.plan(Some(&root))?;
                paths::refuse_patch_links(&plan, &root)?;
                let files = plan_paths(&plan)?;
                Ok((request.to_value(&root), plan, files))
            },
        );
        match checked {
            Ok(Ok((request, plan, files))) => {
                self.route(request, plan, files, intent, agent(&context), None)
                    .await
            }
            Ok(Err(refusal)) => render::refusal(&refusal, None),
            Err(bug) => internal(bug),
        }
    }
}

/// The name the MCP client gave itself in `initialize`, as people know it: its title, else the name
/// of an agent we know under its program name, else that name.
fn agent(context: &RequestContext<RoleServer>) -> Option<String> {
    let info = context.peer.peer_info()?;
    let client = &info.client_info;
    if let Some(title) = client.title.as_deref().filter(|t| !t.trim().is_empty()) {
        return Some(title.to_string());
    }
    let known = match client.name.as_str() {
        "claude-code" => "Claude Code",
        "codex-mcp-client" => "Codex",
        "gemini-cli-mcp-client" => "Gemini CLI",
        "opencode" => "OpenCode",
        "" => return None,
        other => other,
    };
    Some(known.to_string())
}

/// The refusal of an edit in a mode where the agent's own edit tools write nothing. Codex sends the
/// sandbox of the turn with every tool call (`_meta["x-codex-turn-metadata"].sandbox_mode`); in its
/// `read-only` sandbox its apply_patch is rejected, and an approval setting that lets multiedit's tools
/// run without asking (`default_tools_approval_mode`, which `setup --route-edits` writes) must not
/// let multiedit write where Codex itself would not.
fn read_only(context: &RequestContext<RoleServer>) -> Option<Refusal> {
    let mode = context
        .meta
        .get("x-codex-turn-metadata")?
        .get("sandbox_mode")?
        .as_str()?;
    (mode == "read-only").then(|| {
        Refusal::new(
            Kind::ReadOnly,
            "Codex runs this session in its read-only sandbox, where its own apply_patch writes nothing, so multiedit \
             writes nothing either. Nothing was changed. To let edits land, the user runs Codex with --sandbox \
             workspace-write (or --full-auto), or chooses a mode that may write with /permissions.",
        )
    })
}

/// Every path a plan touches: its files and where it moves them, so that the editor chosen holds all.
fn plan_paths(plan: &Plan) -> Result<Vec<PathBuf>, Refusal> {
    paths::names(plan)
        .map(|p| paths::to_path(p).map_err(Refusal::from))
        .collect()
}

#[tool_handler]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("multiedit", env!("CARGO_PKG_VERSION")).with_title("MultiEdit"),
            )
            .with_instructions(INSTRUCTIONS)
    }
}

impl Server {
    /// Validates the plan, offers it to an editor that has every file open, and applies it on disk
    /// only when no editor was sent it.
    async fn run(
        &self,
        arguments: JsonObject,
        intent: Intent,
        agent: Option<String>,
    ) -> CallToolResult {
        let what = if intent == Intent::Preview {
            "multiedit_preview"
        } else {
            "multiedit"
        };
        let value = Value::Object(arguments);
        let checked = catch_panic(what, || -> Result<(Plan, Vec<PathBuf>), Refusal> {
            let plan = engine::plan_from_value(&value)?;
            let files = plan_paths(&plan)?;
            Ok((plan, files))
        });
        let (plan, files) = match checked {
            Ok(Ok(p)) => p,
            Ok(Err(refusal)) => {
                return render::refusal(&stringified_json_hint(refusal, &value), None)
            }
            Err(bug) => return internal(bug),
        };
        self.route(value, plan, files, intent, agent, None).await
    }

    /// Offers the plan (`value`: as the editor's command takes it) to an editor that has every file
    /// open, and applies it on disk only when no editor was sent it; one plan at a time.
    /// `write`: a whole-file write, written on disk by its own rule (`mcp/write.rs`).
    pub(super) async fn route(
        &self,
        value: Value,
        plan: Plan,
        files: Vec<PathBuf>,
        intent: Intent,
        agent: Option<String>,
        write: Option<crate::write::WriteRequest>,
    ) -> CallToolResult {
        let access = if intent == Intent::Preview {
            Access::Preview
        } else {
            Access::Write
        };
        let names: Vec<&str> = paths::names(&plan).collect();
        let protected = match self.confined(access, names) {
            Ok(p) => p,
            Err(refusal) => return render::refusal(&refusal, None),
        };
        let _turn = self.turn.lock().await;
        let allow = self.allow;
        // In a task of its own, so that a panic in the bridge costs this call, not the server.
        let routed = tokio::spawn(async move {
            let sender = bridge::Sender {
                agent: agent.as_deref(),
                allow,
            };
            bridge::route_from::<PlanResult>(&value, &files, intent, sender).await
        })
        .await;
        // Protected files need the user: an editor that holds them asks (or refuses); on disk nobody can.
        if let (Ok(Routed::NoEditor { .. }), false) = (&routed, protected.is_empty()) {
            return render::refusal(&gate::refuse_protected(&protected, &MCP_OPT_OUT), None);
        }
        match routed {
            Ok(Routed::Answered { editor, answer }) => render::editor(&editor, answer, intent),
            Ok(Routed::Refused { editor, refusal }) => render::refusal(&refusal, Some(&editor)),
            Ok(Routed::NoEditor { reason }) => match write {
                Some(w) => write::on_disk(w, &reason, self.confine.clone()).await,
                None => on_disk(plan, intent, &reason, self.context()).await,
            },
            Ok(Routed::Blind { refusal }) => render::refusal(&refusal, None),
            Err(e) => internal(format!(
                "multiedit hit an internal error while offering the plan to the editors ({e}); nothing was written \
                 to disk. If an editor received the plan, check it there. Please report it."
            )),
        }
    }
}

/// Some models send `edits` or `files` as a string holding the JSON array. The engine's refusal names
/// the wrong type; this says how to fix it.
fn stringified_json_hint(refusal: Refusal, value: &Value) -> Refusal {
    if refusal.kind != engine::Kind::InvalidPlan || refusal.hint.is_some() {
        return refusal;
    }
    let Some(field) = ["edits", "files"].into_iter().find(|f| {
        value
            .get(f)
            .and_then(Value::as_str)
            .is_some_and(|s| serde_json::from_str::<Value>(s).is_ok_and(|v| v.is_array()))
    }) else {
        return refusal;
    };
    let hint = format!("`{field}` was sent as a string holding JSON; send the array itself: \"{field}\": [...], not \"{field}\": \"[...]\".");
    refusal.with_hint(Some(hint))
}

/// The CLI's disk path (`disk::plan::apply`): atomic writes, a journal for several files; with the
/// language servers multiedit starts for a project the user allowed, symbol edits, renames and the
/// diagnostics delta (`language_servers::apply`).
async fn on_disk(
    plan: Plan,
    intent: Intent,
    reason: &str,
    ctx: language_servers::Context,
) -> CallToolResult {
    let preview = intent == Intent::Preview;
    let mut recovered = Vec::new();
    let done = language_servers::apply(plan, preview, true, &ctx, &mut recovered).await;
    for r in &recovered {
        crate::process::err(&format!(
            "multiedit mcp: {}\n",
            r.report("before applying this one")
        ));
    }
    match done {
        Ok(done) => render::disk(done.result, done.diff.as_deref(), reason, &recovered),
        // What would serve it is an editor, or a server the user allows: say why no editor took it.
        Err(refusal) if refusal.kind == engine::Kind::NeedsEditor => render::refusal(
            &refusal.with_hint(Some(format!("No editor took the plan: {reason}."))),
            None,
        ),
        Err(refusal) => render::refusal(&refusal, None),
    }
}
