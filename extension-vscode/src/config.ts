// Every `multiedit.*` setting, read in one place (package.json's `contributes.configuration` lists them).
import * as vscode from 'vscode';
import { DiagnosticsReport, ReviewPolicy, SavePolicy } from './lsp_ext';
import { PrepareOptions } from './plan';

function section(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration('multiedit');
}

/** Settings whose change restarts the server (they are its command line or initialization options). */
const SERVER_SETTINGS = ['multiedit.server', 'multiedit.trace', 'multiedit.bridge', 'multiedit.diagnostics', 'multiedit.save', 'multiedit.approveAgentPlans', 'multiedit.allowAgentConfig', 'multiedit.allowDotGit'];

export function affectsServer(e: vscode.ConfigurationChangeEvent): boolean {
  return SERVER_SETTINGS.some((s) => e.affectsConfiguration(s));
}

/** `mode`, `dialect` and `match` for plans that do not name them. */
export function planDefaults(): NonNullable<PrepareOptions['defaults']> {
  const c = section();
  return { mode: c.get<string>('defaults.mode'), dialect: c.get<string>('defaults.dialect'), match: c.get<string>('defaults.match') };
}

export function previewBeforeApply(): boolean {
  return section().get<boolean>('previewBeforeApply') ?? false;
}

export function openEditedFiles(): boolean {
  return section().get<boolean>('openEditedFiles') !== false;
}

/** Whether an edit's touched lines are formatted with the user's formatter (a plan's `format_edits` decides for itself). */
export function formatEdits(): boolean {
  return section().get<boolean>('formatEdits') === true;
}

export function reviewPolicy(): ReviewPolicy | undefined {
  return section().get<ReviewPolicy>('review');
}

/** What the server is started with: `multiedit.server.*`, the bridge, the review and diagnostics options. */
export function serverSettings() {
  const c = section();
  return {
    path: c.get<string | null>('server.path'),
    extraArgs: c.get<string[]>('server.extraArgs') ?? [],
    extraEnv: c.get<Record<string, string>>('server.extraEnv') ?? {},
    // An untrusted workspace's settings may not widen what plans can edit.
    allowOutsideWorkspace: vscode.workspace.isTrusted && c.get<boolean>('server.allowOutsideWorkspace') === true,
    bridge: c.get<boolean>('bridge') !== false,
    review: c.get<string>('review') ?? 'multiFile',
    diagnostics: diagnosticsOption(c),
    save: c.get<SavePolicy>('save') ?? 'clean',
    approveAgentPlans: c.get<boolean>('approveAgentPlans') === true,
    // What agents may write beyond the gate's default: the user's own settings only, so that a cloned
    // repository's .vscode/settings.json cannot widen it.
    allowAgentConfig: c.inspect<boolean>('allowAgentConfig')?.globalValue === true,
    allowDotGit: c.inspect<boolean>('allowDotGit')?.globalValue === true,
  };
}

/** The initialization option `diagnostics` (false: the server never asks for diagnostics). */
function diagnosticsOption(c: vscode.WorkspaceConfiguration): false | { report: DiagnosticsReport; settleMs: number; max: number } {
  const report = c.get<DiagnosticsReport>('diagnostics.report') ?? 'errors';
  if (report === 'off') return false;
  return { report, settleMs: c.get<number>('diagnostics.settleMs') ?? 2000, max: c.get<number>('diagnostics.max') ?? 20 };
}

/** The end-to-end tests' switches: the test commands, and the file they write the editor's state to. */
export function testSettings(): { enabled: boolean; stateFile: string } {
  const c = section();
  return {
    enabled: c.get<boolean>('testing.enableTestCommands') === true || process.env.MULTIEDIT_TEST_MODE === '1',
    stateFile: c.get<string>('testing.stateFile') || process.env.MULTIEDIT_TEST_STATE_FILE || '',
  };
}
