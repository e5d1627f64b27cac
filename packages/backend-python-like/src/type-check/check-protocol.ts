/** Messages between the server and its type-check worker (plain data). */

export interface CheckRequest {
  readonly id: number;
  /** The model's file (`.../1/model.ts`). */
  readonly rootFile: string;
  /** Files seen in place of the disk's (the model's generated types, fresh from its config). */
  readonly overlay: Readonly<Record<string, string>>;
  /** Compiler options as tsconfig.json writes them (see compiler-options.ts). */
  readonly options: Readonly<Record<string, unknown>>;
  /** Diagnostics are reported for files under this folder only (the model's folder). */
  readonly modelDir: string;
  /** Folders the checker may read besides the model's folder, node_modules folders and TypeScript's own libs. */
  readonly readRoots: readonly string[];
  /** Where a bare import the model's folder cannot resolve is looked up (the server's packages); none for a model with its own package.json. */
  readonly fallbackDir?: string;
}

export type CheckReply =
  | { readonly id: number; readonly problems: readonly string[] }
  | { readonly id: number; readonly unavailable: string };
