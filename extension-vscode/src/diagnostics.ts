// The editor's side of `multiedit/diagnostics` (docs/protocol.md): what the documents' diagnostics
// are before a plan's edit, and once the language servers have published for the new text. The delta
// itself is computed by the server. No `vscode` import: unit-tested with node's test runner; the
// wiring to VS Code is in diagnosticsHost.ts.
import type { ReportedDiagnostic } from './lsp_ext';


/** The parts of a `vscode.Diagnostic` that are read (severity 0 error .. 3 hint). */
export interface DiagnosticLike {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  severity: number;
  source?: string;
  code?: string | number | { value: string | number };
  message: string;
}

export function toLsp(d: DiagnosticLike): ReportedDiagnostic {
  const out: ReportedDiagnostic = {
    range: {
      start: { line: d.range.start.line, character: d.range.start.character },
      end: { line: d.range.end.line, character: d.range.end.character },
    },
    severity: d.severity + 1,
    message: d.message,
  };
  if (d.source) out.source = d.source;
  const code = typeof d.code === 'object' && d.code !== null ? d.code.value : d.code;
  if (code !== undefined) out.code = code;
  return out;
}

/** How long after a document's last diagnostics change it counts as settled: the TypeScript extension
 * publishes syntax and semantic results in one update when they come within 50 ms, and VS Code
 * batches change events over 50 ms, so a second update of the same check comes within this. */
export const QUIET_MS = 60;

export interface Clock {
  now(): number;
  setTimeout(f: () => void, ms: number): unknown;
  clearTimeout(t: unknown): void;
}

export const realClock: Clock = {
  now: () => performance.now(),
  setTimeout: (f, ms) => setTimeout(f, ms),
  clearTimeout: (t) => clearTimeout(t as ReturnType<typeof setTimeout>),
};

/**
 * The diagnostics changes of the documents one edit touched, recorded from the moment the edit is
 * handed to VS Code (so an update published before the server asks is not missed).
 */
export class ChangeRecorder {
  started: number;
  /** Per URI key, when its diagnostics last changed. */
  readonly changed = new Map<string, number>();
  private listeners: (() => void)[] = [];

  constructor(
    readonly keys: Set<string>,
    private readonly clock: Clock = realClock,
  ) {
    this.started = clock.now();
  }

  /**
   * The editor has applied the edit (a review in the Refactor Preview may have taken minutes): the
   * wait and its bound count from now, and only changes from now on count.
   */
  applied(): void {
    this.started = this.clock.now();
    this.changed.clear();
  }

  /** Diagnostics changed for these URI keys. */
  record(keys: readonly string[]): void {
    let hit = false;
    for (const k of keys) {
      if (this.keys.has(k)) {
        this.changed.set(k, this.clock.now());
        hit = true;
      }
    }
    if (hit) for (const l of this.listeners) l();
  }

  /**
   * Resolves once every key in `waitFor` is settled: its diagnostics changed since the edit and then
   * stayed quiet for `quietMs`, or they did not change within `idleMs(key)` after the edit (its
   * language server had nothing new to publish: `quiet`). At `boundMs` after the edit, the keys that
   * neither changed nor reached their idle time are `pending`. Documents without a diagnostics
   * provider are not waited for (not in `waitFor`).
   */
  settle(waitFor: readonly string[], boundMs: number, idleMs: (key: string) => number, quietMs = QUIET_MS): Promise<Settled> {
    return new Promise((resolve) => {
      const timers: unknown[] = [];
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        for (const t of timers) this.clock.clearTimeout(t);
        this.listeners = this.listeners.filter((l) => l !== check);
        const unchanged = waitFor.filter((k) => !this.changed.has(k));
        const times = waitFor.map((k) => this.changed.get(k)).filter((t): t is number => t !== undefined);
        const now = this.clock.now();
        resolve({
          pending: unchanged.filter((k) => this.started + idleMs(k) > now),
          quiet: unchanged.filter((k) => this.started + idleMs(k) <= now),
          waitedMs: Math.round(now - this.started),
          publishedMs: times.length ? Math.round(Math.max(...times) - this.started) : undefined,
        });
      };
      const check = () => {
        const now = this.clock.now();
        let wait = 0;
        for (const k of waitFor) {
          const at = this.changed.get(k);
          const until = at !== undefined ? at + quietMs : this.started + idleMs(k);
          wait = Math.max(wait, until - now);
        }
        if (wait <= 0) finish();
        else timers.push(this.clock.setTimeout(check, Math.min(wait, Math.max(0, this.started + boundMs - now))));
      };
      this.listeners.push(check);
      timers.push(this.clock.setTimeout(finish, Math.max(0, this.started + boundMs - this.clock.now())));
      check();
    });
  }
}

export interface Settled {
  /** Not updated by the bound: nothing is said about them. */
  pending: string[];
  /** Not updated within their idle time: their language server had nothing new (taken as unchanged). */
  quiet: string[];
  waitedMs: number;
  publishedMs?: number;
}

/** How long after an edit a document whose language server sends no update counts as unchanged:
 * twice the longest time that language's server took to publish after an edit in this session, or
 * `DEFAULT_IDLE_MS` before any. */
export function idleTime(latenciesMs: readonly number[]): number {
  return latenciesMs.length ? Math.max(300, 2 * Math.max(...latenciesMs) + 100) : DEFAULT_IDLE_MS;
}

export const DEFAULT_IDLE_MS = 1000;

/**
 * Whether any language server can be expected to publish for a document of `languageId`: one has
 * published for that language before, or an active extension starts for it (`onLanguage:<id>`).
 * A plain text file then costs no wait.
 */
export function hasProvider(languageId: string, seenLanguages: ReadonlySet<string>, activationEvents: readonly string[]): boolean {
  return seenLanguages.has(languageId) || activationEvents.includes(`onLanguage:${languageId}`);
}
