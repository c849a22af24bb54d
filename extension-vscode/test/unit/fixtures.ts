// Results and refusals as the server sends them (lsp_ext.generated.ts), from the few fields a test is
// about: the rest take the values the server gives when it has nothing to say.
import type { FileResult, PlanResult, RefusalData } from '../../src/lsp_ext';

type LooseFile = Partial<FileResult> & { file_path: string };
type LooseResult = Omit<Partial<PlanResult>, 'files' | 'edits_failed'> & {
  ok: boolean;
  message: string;
  files?: LooseFile[];
  edits_failed?: Partial<RefusalData>[];
};

export function fileResult(f: LooseFile): FileResult {
  return { created: false, tiers: [], ...f, edits_applied: f.edits_applied ?? 0, replacements: f.replacements ?? f.edits_applied ?? 0 };
}

export function refusalData(r: Partial<RefusalData>): RefusalData {
  return { kind: 'not_found', message: '', ...r };
}

export function planResult(r: LooseResult): PlanResult {
  return { ...r, files: (r.files ?? []).map(fileResult), edits_failed: (r.edits_failed ?? []).map(refusalData) };
}
