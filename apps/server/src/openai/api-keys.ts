/**
 * Static API keys for the OpenAI routes (`--openai-api-key`, `--openai-api-key-file`): when any is
 * set, every `/v1/` request must carry one as `Authorization: Bearer <key>`, the way OpenAI's
 * clients send it. Keys are compared as SHA-256 digests with timingSafeEqual, against every key
 * without stopping at a match, so neither a key's bytes, its length nor which key matched can be
 * read from response times. A key is never echoed or logged.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { OpenAiError } from './errors.ts';

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

export class ApiKeys {
  private readonly digests: readonly Buffer[];

  constructor(keys: readonly string[]) {
    this.digests = keys.map(digest);
  }

  get required(): boolean {
    return this.digests.length > 0;
  }

  /** Throws OpenAI's 401 unless `authorization` (the header's value) carries one of the keys. */
  check(authorization: string | undefined): void {
    if (!this.required) return;
    const match = authorization === undefined ? null : /^Bearer +(\S+) *$/i.exec(authorization);
    if (!match) {
      throw new OpenAiError(
        401,
        "You didn't provide an API key. This server requires one in an Authorization header using Bearer auth (Authorization: Bearer YOUR_KEY).",
        'missing_api_key',
        null,
        'invalid_request_error',
      );
    }
    const given = digest(match[1]!);
    let found = false;
    for (const d of this.digests) found = timingSafeEqual(given, d) || found;
    if (!found) throw new OpenAiError(401, 'Incorrect API key provided.', 'invalid_api_key', null, 'invalid_request_error');
  }
}

/** The keys of a `--openai-api-key-file`: one per line; blank lines and `#` comments are skipped. */
export function readApiKeyFile(path: string): string[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(`cannot read --openai-api-key-file '${path}': ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  const keys = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  if (keys.length === 0) throw new Error(`--openai-api-key-file '${path}' holds no key`);
  return keys;
}

/** A key must be a single token of visible ASCII (what a Bearer header can carry). */
export function checkApiKey(key: string, flag: string): string {
  if (!/^[\x21-\x7e]+$/.test(key)) throw new Error(`${flag}: a key must be visible ASCII without spaces`);
  return key;
}
