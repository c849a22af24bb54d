// Answers the server's `multiedit/approve`: the user's one approval of a whole plan. The diff opens, and
// one notification asks Apply All or Discard: nothing to tick file by file, and the whole plan applies
// in one step. The server gives up at `timeoutMs` and never applies the plan after that; a click that
// comes later applies nothing and says so.
import * as vscode from 'vscode';
import { ApproveAnswer, ApproveParams } from './lsp_ext';
import { closePreviewTabs, PreviewContent, previewEntries } from './previewContent';
import { LspWorkspaceEdit } from './workspaceEdit';

export const APPLY_ALL = 'Apply All';
export const DISCARD = 'Discard';

export class ApproveHost {
  constructor(
    private readonly previews: PreviewContent,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  async handle(params: ApproveParams): Promise<ApproveAnswer> {
    const who = params.agent ? `${params.agent} wants to apply` : 'Apply';
    const what = params.label.replace(/^[^:]*:\s*/, '');
    const seconds = Math.round(params.timeoutMs / 1000);
    await this.showDiff(params, what);
    const reason = params.reason ? ` ${params.reason}` : '';
    const question = `MultiEdit: ${who} ${what}.${reason}${seconds <= 120 ? ` (Withdrawn if you do not decide within ${seconds} s.)` : ''}`;
    this.log.info(`asking for approval: ${params.label}`);
    let timer: ReturnType<typeof setTimeout> | undefined;
    // The server's own bound, counted from when the question arrived: the server, which counted from
    // when it asked, has given up by then and reports the plan as undecided, whatever this answers.
    const expired = new Promise<'expired'>((resolve) => {
      timer = setTimeout(() => resolve('expired'), params.timeoutMs);
    });
    // A change to what an agent may do is a warning, not news.
    const show = params.reason ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
    const asked = show(question, APPLY_ALL, DISCARD);
    const pick = await Promise.race([asked, expired]);
    clearTimeout(timer);
    await closePreviewTabs();
    if (pick === 'expired') {
      // The notification cannot be taken back: a late click applies nothing, and says so.
      void asked.then((late) => {
        if (late) void vscode.window.showInformationMessage(`MultiEdit: ${params.label} was withdrawn after ${seconds} s without a decision; nothing was applied.`);
      });
    }
    // Closing the notification is no approval.
    const decision = pick === APPLY_ALL ? 'apply' : 'discard';
    this.log.info(`approval of ${params.label}: ${pick === 'expired' ? 'no decision in time' : decision}`);
    return { decision };
  }

  /** The change as a diff: one file's diff, or VS Code's multi-file diff. */
  private async showDiff(params: ApproveParams, what: string): Promise<void> {
    try {
      const entries = await previewEntries(this.previews, params.edit as LspWorkspaceEdit);
      const title = `MultiEdit: ${what}`;
      if (entries.length === 1) await vscode.commands.executeCommand('vscode.diff', entries[0][1], entries[0][2], title, { preview: true, preserveFocus: true });
      else if (entries.length > 1) await vscode.commands.executeCommand('vscode.changes', title, entries);
    } catch (e) {
      this.log.warn(`could not show the diff of ${params.label}: ${e}`);
    }
  }
}
