import { InferError } from '../../errors.ts';

/** Deepest path below a model folder the cache will write (a repository is a few levels deep). */
const MAX_DEPTH = 32;
/** Longest path segment most file systems accept. */
const MAX_SEGMENT_BYTES = 255;

/**
 * Checks a path that came from a repository source before it names anything on disk: relative,
 * `/`-separated, no empty, `.` or `..` segment, no NUL or backslash, bounded depth and segment
 * length. An object key such as `models/m/1/../../../etc/x` or `models/m//etc/x` is refused here,
 * so no key can write outside the cache. Returns the segments. `where` names the repository URL
 * for the message.
 */
export function checkRelativePath(relative: string, where: string): string[] {
  const refuse = (why: string): never => {
    throw new InferError('INVALID_ARG', `refusing object '${relative}' in repository '${where}': ${why}`);
  };
  if (relative === '') refuse('empty path');
  if (relative.startsWith('/')) refuse('absolute path');
  if (/[\0\\]/.test(relative)) refuse('NUL or backslash in the path');
  const segments = relative.split('/');
  if (segments.length > MAX_DEPTH) refuse(`more than ${MAX_DEPTH} levels deep`);
  for (const s of segments) {
    if (s === '') refuse('empty path segment');
    if (s === '.' || s === '..') refuse(`'${s}' path segment`);
    if (Buffer.byteLength(s) > MAX_SEGMENT_BYTES) refuse(`a path segment longer than ${MAX_SEGMENT_BYTES} bytes`);
  }
  return segments;
}
