/**
 * Triton's cloud credential file (`TRITON_CLOUD_CREDENTIAL_PATH`, server docs "Cloud Storage with
 * Credential file"): a JSON object with one section per scheme (`"s3"`, `"as"`, `"gs"`), each
 * mapping a path prefix (`""` matches every path) to that provider's credential. The longest
 * prefix that starts the repository URL wins (Triton's GetLongestMatchingNameIndex). Without the
 * variable, each provider reads its standard environment variables and files.
 */
import { readFileSync } from 'node:fs';
import { InferError } from '@tritium/core';

export type CredentialScheme = 's3' | 'as' | 'gs';

/** Bounds the file: a credential file is a few hundred bytes. */
const MAX_CREDENTIAL_FILE_BYTES = 1 << 20;

/**
 * The credential for `url` from the file named by `env.TRITON_CLOUD_CREDENTIAL_PATH`, or undefined
 * when the variable is unset. Throws INVALID_ARG naming the file (never its content) when the file
 * cannot be read or parsed, or when no entry matches `url` (Triton: "Cannot match credential").
 */
export function credentialFromFile(scheme: CredentialScheme, url: string, env: NodeJS.ProcessEnv): unknown {
  const file = env.TRITON_CLOUD_CREDENTIAL_PATH;
  if (file === undefined || file === '') return undefined;
  let parsed: unknown;
  try {
    const text = readFileSync(file, 'utf8');
    if (text.length > MAX_CREDENTIAL_FILE_BYTES) throw new Error(`larger than ${MAX_CREDENTIAL_FILE_BYTES} bytes`);
    parsed = JSON.parse(text);
  } catch (err) {
    // The parser's message can quote the file's text, which holds secrets: name the file only.
    const why = err instanceof SyntaxError ? 'not valid JSON' : (err as Error).message;
    throw new InferError('INVALID_ARG', `failed to read cloud credential file TRITON_CLOUD_CREDENTIAL_PATH='${file}': ${why}`);
  }
  const section = (parsed as Record<string, unknown> | null)?.[scheme];
  if (section === undefined) throw new InferError('INVALID_ARG', `Cannot match credential for path ${url}: no "${scheme}" section in '${file}'`);
  if (!section || typeof section !== 'object' || Array.isArray(section)) {
    throw new InferError('INVALID_ARG', `cloud credential file '${file}': "${scheme}" must be an object of path prefix → credential`);
  }
  const names = Object.keys(section).sort((a, b) => b.length - a.length);
  const match = names.find((name) => url.startsWith(name));
  if (match === undefined) throw new InferError('INVALID_ARG', `Cannot match credential for path ${url} in '${file}'`);
  return (section as Record<string, unknown>)[match];
}

/** A string field of a credential entry ('' when absent), refusing other types with the field named. */
export function credentialField(entry: unknown, field: string, file: string | undefined): string {
  if (entry === null || typeof entry !== 'object') return '';
  const value = (entry as Record<string, unknown>)[field];
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') {
    throw new InferError('INVALID_ARG', `cloud credential file '${file ?? ''}': field '${field}' must be a string`);
  }
  return value;
}

/** A provider's credential fields for one URL: from the credential file's entry when the file is set, else the environment. */
export interface CredentialFields {
  /** Whether TRITON_CLOUD_CREDENTIAL_PATH names the file the fields come from. */
  readonly fromFile: boolean;
  /** `name` of the file's entry, or else `env[envName]` ('' when absent, or when no variable stands for it). */
  field(name: string, envName?: string): string;
}

/** The fields of `url`'s credential for `scheme` (see credentialFromFile for what is refused). */
export function credentialFields(scheme: CredentialScheme, url: string, env: NodeJS.ProcessEnv): CredentialFields {
  const entry = credentialFromFile(scheme, url, env);
  const file = env.TRITON_CLOUD_CREDENTIAL_PATH;
  const fromFile = entry !== undefined;
  return {
    fromFile,
    field: (name, envName) => (fromFile ? credentialField(entry, name, file) : envName === undefined ? '' : (env[envName] ?? '')),
  };
}
