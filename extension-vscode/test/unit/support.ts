// What the unit tests share (bundled into each test file; not a test itself).
import { ChatOutput } from '../../src/assist';

/** A chat output that records what the participant says, one line per call. */
export function recorder() {
  const log: string[] = [];
  const out: ChatOutput = {
    progress: (t) => log.push(`progress: ${t}`),
    markdown: (t) => log.push(t),
    button: (c, t, a) => log.push(`button: ${t} -> ${c}${a ? ` ${JSON.stringify(a)}` : ''}`),
  };
  return { log, out, text: () => log.join('\n') };
}
