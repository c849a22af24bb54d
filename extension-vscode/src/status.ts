// The status bar item's text: the server's state and the last plan's outcome. No `vscode` import.

export type ServerStateName = 'starting' | 'running' | 'stopped' | 'failed';

export interface LastOutcome {
  outcome: 'applied' | 'refused' | 'declined';
  /** Short: the edit's label ("Claude Code: 2 edits to 2 files"), "edit 2 in a.txt". */
  text: string;
  time?: Date;
}

export function statusText(server: ServerStateName, last?: LastOutcome): { text: string; tooltip: string; error: boolean } {
  const icon = server === 'running' ? '$(replace-all)' : server === 'starting' ? '$(loading~spin)' : '$(warning)';
  let text = `${icon} MultiEdit`;
  const serverLine =
    server === 'running' ? 'Server running' : server === 'starting' ? 'Server starting' : server === 'failed' ? 'Server failed to start' : 'Server stopped';
  let tooltip = serverLine;
  if (last) {
    const mark = last.outcome === 'applied' ? '$(check)' : last.outcome === 'refused' ? '$(error)' : '$(circle-slash)';
    text += ` ${mark}`;
    const when = last.time ? ` at ${last.time.toLocaleTimeString()}` : '';
    tooltip += `\nLast edit${when}: ${last.outcome}${last.text ? ` (${last.text})` : ''}`;
  }
  tooltip += '\nClick to show the logs';
  return { text, tooltip, error: server === 'failed' || last?.outcome === 'refused' };
}
