/**
 * A root server's sandbox (uid 65534) reading from under a folder closed to others (a checkout in
 * a 0700 `mktemp -d` folder or home): the folder is covered in the child's own mount namespace and
 * only what the child reads is bound back, so it still runs as 65534; `--strict-sandbox` refuses a
 * model whose sandbox would lack a guarantee. The real cases run where the server is root and the
 * host allows mount namespaces, and say why they skip elsewhere.
 */
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferError } from '../../src/errors.ts';
import { spawnWorkerInstance } from '../../src/worker/worker-host.ts';
import { probeSandboxHost, sandboxCommand, sandboxSpec, spawnIdentity, type SandboxHost } from '../../src/worker/process-sandbox.ts';
import { planMounts } from '../../src/worker/sandbox-mounts.ts';
import type { WorkerInstance, WorkerInstanceOptions } from '../../src/worker/types.ts';
import { TEST_ENTRIES, captureLog, type TestModelInit } from '../../src/testing/index.ts';
import type { InferResponse } from '../../src/types.ts';

const host = await probeSandboxHost();
const nobody = { uid: 65534, gid: 65534 };
const never = new AbortController().signal;

let closed: string;
beforeAll(() => {
  // closed/ (0700) holds open/ (0755) with a file, and a secret beside it.
  closed = mkdtempSync(path.join(os.tmpdir(), 'tritium-closed-'));
  chmodSync(closed, 0o700);
  mkdirSync(path.join(closed, 'open', 'deep'), { recursive: true, mode: 0o755 });
  chmodSync(path.join(closed, 'open'), 0o755);
  writeFileSync(path.join(closed, 'open', 'deep', 'weights.txt'), 'weights', { mode: 0o644 });
  writeFileSync(path.join(closed, 'secret.txt'), 'secret', { mode: 0o644 });
  mkdirSync(path.join(closed, 'private'), { mode: 0o700 });
});
afterAll(() => rmSync(closed, { recursive: true, force: true }));

describe('sandbox mounts: the plan', () => {
  it('covers the topmost folder closed to the sandbox’s uid and binds back only what it reads', () => {
    const plan = planMounts([path.join(closed, 'open'), path.join(closed, 'open', 'deep', 'weights.txt'), '/usr/bin'], nobody);
    expect(plan).toEqual({ covers: [{ dir: closed, binds: [{ rel: 'open', kind: 'd' }] }], unreadable: [] });
    expect(planMounts([path.join(closed, 'secret.txt')], nobody).covers).toEqual([{ dir: closed, binds: [{ rel: 'secret.txt', kind: 'f' }] }]);
  });

  it('cannot help a path whose own mode keeps the sandbox out', () => {
    expect(planMounts([path.join(closed, 'private')], nobody)).toEqual({ covers: [], unreadable: [path.join(closed, 'private')] });
  });

  it.runIf(process.getuid?.() === 0)('reads a folder of the sandbox’s group by its group bits (uploads are root:65534 0750)', () => {
    const dir = path.join(closed, 'open', 'upload');
    mkdirSync(dir, { mode: 0o750 });
    chownSync(dir, 0, 65534);
    chmodSync(dir, 0o750);
    expect(planMounts([dir], nobody).unreadable).toEqual([]);
    expect(planMounts([dir], { uid: 1234, gid: 1234 }).unreadable).toEqual([dir]);
    rmSync(dir, { recursive: true });
  });

  it('starts in a mount namespace and drops to 65534 itself when it has covers', () => {
    const full: SandboxHost = {
      unshare: '/usr/bin/unshare',
      netns: true,
      setpriv: '/usr/bin/setpriv',
      mounts: { unshare: '/usr/bin/unshare', mount: '/usr/bin/mount' },
      runAs: nobody,
      problems: {},
    };
    const spec = sandboxSpec(full, { readPaths: [path.join(closed, 'open')] });
    expect(spec.unenforced).toEqual([]);
    expect(spec.runAs).toEqual(nobody);
    expect(spawnIdentity(spec)).toBeUndefined(); // spawned as root, to mount
    const { command, args } = sandboxCommand(spec, ['/node', 'x.mjs'], '/srv');
    expect(command).toBe('/usr/bin/setpriv');
    expect(args.slice(0, 8)).toEqual(['--pdeathsig', 'KILL', '--', '/usr/bin/unshare', '--mount', '--propagation', 'private', '--']);
    const script = args.indexOf('tritium-sandbox-mounts');
    expect(args.slice(script + 1, script + 8)).toEqual(['/usr/bin/mount', '/srv', closed, 'd', 'open', '/', '--']);
    expect(args.slice(script + 8, script + 16)).toEqual(['/usr/bin/setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--pdeathsig', 'KILL', '--no-new-privs', '--']);
    // Without covers: spawned as 65534, no mount namespace.
    const open = sandboxSpec(full, { readPaths: ['/usr/bin'] });
    expect(spawnIdentity(open)).toEqual(nobody);
    expect(sandboxCommand(open, ['/node']).args).not.toContain('--mount');
    // A host without mount namespaces keeps the server's uid there, and says why.
    const bare = sandboxSpec({ ...full, mounts: undefined, mountProblem: 'mount namespaces are refused here (x)' }, { readPaths: [path.join(closed, 'open')] });
    expect(bare.runAs).toBeUndefined();
    expect(bare.unenforced).toEqual([
      { id: 'files', why: `uid 65534 could not reach ${path.join(closed, 'open')} (${closed} is closed to others) and mount namespaces are refused here (x); the sandbox keeps the server's uid` },
    ]);
  });
});

const spawned: WorkerInstance[] = [];
afterAll(async () => {
  await Promise.all(spawned.map((i) => i.dispose()));
});

async function start(extra: Partial<WorkerInstanceOptions<TestModelInit>>): Promise<WorkerInstance> {
  const inst = await spawnWorkerInstance<TestModelInit>({
    entry: TEST_ENTRIES.fault,
    init: { model: 'p', version: 1, inputs: ['INPUT0'], outputs: ['OUTPUT0'] },
    model: 'p',
    instanceName: `p_0_${spawned.length}`,
    isolation: 'process',
    ...extra,
  });
  spawned.push(inst);
  return inst;
}

async function read(inst: WorkerInstance, file: string): Promise<string> {
  const inputs = [{ name: 'INPUT0', datatype: 'UINT8' as const, shape: [1], data: new Uint8Array([9]) }];
  const {
    results: [result],
  } = await inst.execute([{ id: 'r', model: 'p', inputs, parameters: { fault: `read:${file}` } }], never);
  if (InferError.is(result)) throw result;
  return new TextDecoder().decode((result as InferResponse).outputs[0]!.data);
}

const canCover = host.runAs !== undefined && host.mounts !== undefined;
if (!canCover) {
  console.log(`[sandbox-mounts.test] skipping the real covers: ${host.runAs ? (host.mountProblem ?? 'no mount namespace') : 'the server is not root (the sandbox keeps its uid)'}`);
}

describe.runIf(canCover)('sandbox mounts: a child reading from under a closed folder', () => {
  it('runs as 65534, reads what it was given, and sees nothing else of the folder', async () => {
    const log = captureLog();
    const inst = await start({ log, processPermissions: { allowRead: [path.join(closed, 'open')] } });
    expect(log.lines.filter((l) => l.includes('does NOT enforce'))).toEqual([]);
    expect(await read(inst, path.join(closed, 'open', 'deep', 'weights.txt'))).toBe('weights');
    const pid = (inst as unknown as { gen: { channel: { pid: number } } }).gen.channel.pid;
    // The sandbox's outermost process (its user namespace's owner) runs as 65534 ...
    expect(readFileSync(`/proc/${pid}/status`, 'utf8')).toMatch(/^Uid:\s+65534\s+65534\s+65534\s+65534$/m);
    // ... and in its mount namespace the closed folder holds only what was bound back.
    const view = `/proc/${pid}/root`;
    expect(existsSync(path.join(view, closed, 'open', 'deep', 'weights.txt'))).toBe(true);
    expect(existsSync(path.join(view, closed, 'secret.txt'))).toBe(false);
    expect(existsSync(path.join(closed, 'secret.txt'))).toBe(true); // the server's own view is untouched
  });

  it('with --strict-sandbox refuses to start a child that would lack a guarantee, naming it', async () => {
    const unreadable = path.join(closed, 'private');
    await expect(start({ policy: { strictSandbox: true }, processPermissions: { allowRead: [unreadable] } })).rejects.toMatchObject({
      code: 'UNSUPPORTED',
      message: expect.stringMatching(/does NOT enforce: files \(uid 65534 could not read .*private; the sandbox keeps the server's uid\); refused by --strict-sandbox$/),
    });
    // Without it, the child starts and the server warns.
    const log = captureLog();
    await start({ log, processPermissions: { allowRead: [unreadable] } });
    expect(log.lines.join('\n')).toContain('does NOT enforce: files');
  });
});
