// Every message and type multiedit adds to LSP, as the extension sees them. The types, the request
// methods, the server's command names and the refusal kinds are generated from the Rust types
// (server/src/protocol/ext.rs, server/src/result.rs) into lsp_ext.generated.ts, so the two sides cannot
// drift: the server's test fails when that file is not what the types give, and this extension's type
// check fails wherever it reads what the server no longer sends. docs/protocol.md says what each means.
// No `vscode` import.
import { RequestType } from 'vscode-languageserver-protocol';
import * as g from './lsp_ext.generated';

export * from './lsp_ext.generated';

// The requests the server sends the editor, each typed with its params and answer (as rust-analyzer's
// lsp_ext.ts pairs them), under the methods the server defines.
export const approve = new RequestType<g.ApproveParams, g.ApproveAnswer, void>(g.APPROVE_METHOD);
export const save = new RequestType<g.SaveParams, g.SaveAnswer, void>(g.SAVE_METHOD);
export const diagnostics = new RequestType<g.DiagnosticsParams, g.DiagnosticsAnswer, void>(g.DIAGNOSTICS_METHOD);
export const symbols = new RequestType<g.SymbolsParams, g.SymbolsAnswer, void>(g.SYMBOLS_METHOD);
export const rename = new RequestType<g.RenameParams, g.RenameAnswer, void>(g.RENAME_METHOD);
