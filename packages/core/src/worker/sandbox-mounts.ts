/**
 * Where a root server's sandbox (uid/gid 65534) could not reach what it must read: a path under a
 * folder others may not traverse (a checkout in a 0700 home or `mktemp -d` folder, a repository
 * under /root). The child then starts in a mount namespace of its own where each such folder is
 * covered by an empty tmpfs (mode 0755, nothing writable, nothing executable) that holds only the
 * paths the child may read, each bind-mounted from the real one at its own path: the child reaches
 * them as 65534, and sees nothing else of the folder. The mounts are made as root before the child
 * drops to 65534 (`setpriv --reuid`); in the child's own user namespace they are locked together, so
 * it cannot unmount the cover to see what it hides.
 */
import { statSync, type Stats } from 'node:fs';
import { dirname, relative, sep } from 'node:path';

/** An identity the sandbox runs as. */
export interface Identity {
  readonly uid: number;
  readonly gid: number;
}

/** One folder covered by a tmpfs, with the paths (relative to it) bound back in. */
export interface Cover {
  readonly dir: string;
  readonly binds: readonly { readonly rel: string; readonly kind: 'd' | 'f' }[];
}

export interface MountPlan {
  /** Folders to cover: none when every path is reachable as it is. */
  readonly covers: readonly Cover[];
  /** Paths the identity could not read even through a cover (their own mode keeps it out). */
  readonly unreadable: readonly string[];
}

/** Whether `as` has the `need` bits (4 read, 1 traverse/execute) on a file with `st`'s owner, group and mode. */
function allowed(st: Stats, as: Identity, need: number): boolean {
  const bits = st.uid === as.uid ? (st.mode >> 6) & 7 : st.gid === as.gid ? (st.mode >> 3) & 7 : st.mode & 7;
  return (bits & need) === need;
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/** The topmost folder above `path` that `as` may not traverse, or undefined when every one is open. */
function topmostClosedAncestor(path: string, as: Identity): string | undefined {
  const ancestors: string[] = [];
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    ancestors.unshift(dir);
    if (dirname(dir) === dir) break;
  }
  for (const dir of ancestors) {
    const st = statOrUndefined(dir);
    if (!st || !allowed(st, as, 1)) return dir;
  }
  return undefined;
}

/**
 * How `as` comes to read each of `paths` (folders, or files; a trailing `/*` is ignored; a path
 * that does not exist needs nothing): reachable as is, through a cover, or not at all.
 */
export function planMounts(paths: readonly string[], as: Identity): MountPlan {
  const covers = new Map<string, { rel: string; kind: 'd' | 'f' }[]>();
  const unreadable: string[] = [];
  for (const raw of paths) {
    const path = raw.replace(/\/\*$/, '');
    const st = statOrUndefined(path);
    if (!st) continue;
    if (!allowed(st, as, st.isDirectory() ? 5 : 4)) {
      unreadable.push(path);
      continue;
    }
    const closed = topmostClosedAncestor(path, as);
    if (closed === undefined) continue;
    const binds = covers.get(closed) ?? [];
    binds.push({ rel: relative(closed, path), kind: st.isDirectory() ? 'd' : 'f' });
    covers.set(closed, binds);
  }
  return {
    covers: [...covers].map(([dir, binds]) => ({ dir, binds: withoutNested(binds) })),
    unreadable,
  };
}

/** Binds in the order they are made, a path inside another bound folder left out (it is visible through it). */
function withoutNested(binds: { rel: string; kind: 'd' | 'f' }[]): { rel: string; kind: 'd' | 'f' }[] {
  const sorted = [...binds].sort((a, b) => a.rel.length - b.rel.length);
  const out: { rel: string; kind: 'd' | 'f' }[] = [];
  for (const b of sorted) {
    if (!out.some((o) => o.kind === 'd' && (b.rel === o.rel || b.rel.startsWith(o.rel + sep)))) out.push(b);
  }
  return out;
}

/**
 * Makes the covers, then runs the rest of its arguments. Arguments: the `mount` tool, the folder to
 * start the child in, then per cover its folder, `<kind> <relative path>` per bind and `/`, then
 * `--` and the command. Each bind's source is read relative to the real folder (the shell's working
 * folder, entered before the cover hides it), its target through the cover. Paths travel as
 * arguments, never inside the script's text.
 */
const MOUNT_SCRIPT = [
  'set -e',
  'm=$1; cwd=$2; shift 2',
  'while [ "$1" != -- ]; do',
  '  d=$1; shift; cd "$d"',
  '  "$m" -t tmpfs -o mode=0755,size=4k,nosuid,nodev,noexec tritium-sandbox "$d"',
  '  while [ "$1" != / ]; do',
  '    if [ "$1" = f ]; then case $2 in */*) mkdir -p "$d/${2%/*}";; esac; : > "$d/$2"; else mkdir -p "$d/$2"; fi',
  '    "$m" -c --bind "$2" "$d/$2"; shift 2',
  '  done',
  '  shift',
  'done',
  'shift',
  'cd "$cwd" 2>/dev/null || cd /',
  'exec "$@"',
].join('\n');

/** The command line prefix that makes `plan`'s covers in a private mount namespace, then runs what follows it. */
export function mountPrefix(tools: { readonly unshare: string; readonly mount: string }, plan: MountPlan, cwd: string): string[] {
  const covers = plan.covers.flatMap((c) => [c.dir, ...c.binds.flatMap((b) => [b.kind, b.rel]), '/']);
  return [tools.unshare, '--mount', '--propagation', 'private', '--', '/bin/sh', '-c', MOUNT_SCRIPT, 'tritium-sandbox-mounts', tools.mount, cwd, ...covers, '--'];
}

/** The probe's arguments for `unshare`: one cover of `dir` (nothing bound), then `command` as `as`. */
export function mountProbeArgs(mount: string, dir: string, setpriv: string, as: Identity, command: readonly string[]): string[] {
  return mountPrefix({ unshare: '', mount }, { covers: [{ dir, binds: [] }], unreadable: [] }, '/')
    .slice(1)
    .concat([setpriv, ...dropTo(as), '--', ...command]);
}

/** `setpriv` arguments that switch to `as`, with no supplementary groups. */
export function dropTo(as: Identity): string[] {
  return [`--reuid=${as.uid}`, `--regid=${as.gid}`, '--clear-groups'];
}
