/**
 * System shared memory regions registered by clients (Triton's system_shared_memory extension).
 * A region is a POSIX shm object, i.e. the file `/dev/shm/<key>`; inputs are read from it and
 * outputs written into it at `offset + tensor offset`. Registering requires `--allow-client-shm`.
 *
 * The key comes from the network, so it is held to what shm_open(3) accepts and no more: one name
 * (an optional leading '/', then no '/', not '.' or '..', no NUL, at most NAME_MAX bytes), opened with
 * O_NOFOLLOW (a symlink planted at /dev/shm/<key> is refused, never followed), and only a regular file
 * on the shm filesystem itself is accepted. Bounds are checked against the file's real size (fstat) at
 * registration and again at every read and write, since the client may shrink the file afterwards.
 */
import fs from 'node:fs';
import path from 'node:path';
import { InferError, type DataType } from '@tritium/core';
import { inputByteSizeMismatch } from '@tritium/core/server';
import { expectedByteSize } from '@tritium/core/tensor';

export interface ShmRegionStatus {
  readonly name: string;
  readonly key: string;
  readonly offset: number;
  readonly byte_size: number;
}

interface Region extends ShmRegionStatus {
  readonly fd: number;
}

export const SHM_DISABLED_MESSAGE =
  'client shared memory is disabled on this server; start it with --allow-client-shm=true to use it';

export const CUDA_SHM_UNSUPPORTED_MESSAGE =
  'CUDA shared memory is not supported by this server (no CUDA IPC in Tritium); use system shared memory or send tensors in the request';

/**
 * Beyond Triton: the most regions registered at once. Each holds an open file descriptor, so a
 * client registering regions without end (same key, new names) used up the process's descriptors,
 * and the server could then accept no connection and open no model file.
 */
export const MAX_SHM_REGIONS = 4096;

/** NAME_MAX on Linux: the longest file name, hence the longest shm object name. */
const MAX_KEY_BYTES = 255;

export class SharedMemoryRegistry {
  private readonly regions = new Map<string, Region>();
  /** The shm folder with its own links resolved (the server's choice, trusted), once. */
  private realShmDir: { path: string; dev: number } | undefined;

  constructor(
    readonly allowed: boolean,
    /** Folder holding POSIX shm objects. */
    private readonly shmDir = '/dev/shm',
  ) {}

  private shmFolder(): { path: string; dev: number } {
    if (!this.realShmDir) {
      const real = fs.realpathSync(this.shmDir);
      this.realShmDir = { path: real, dev: fs.statSync(real).dev };
    }
    return this.realShmDir;
  }

  /**
   * Opens `/dev/shm/<key>` read-write without following a link, and returns the fd of a regular file
   * on the shm filesystem with its size; anything else is INVALID_ARG naming the region and key.
   */
  private openKey(name: string, key: string): { fd: number; size: number } {
    const base = key.startsWith('/') ? key.slice(1) : key;
    if (!base || base === '.' || base === '..' || base.includes('/') || base.includes('\0') || Buffer.byteLength(base) > MAX_KEY_BYTES) {
      throw new InferError(
        'INVALID_ARG',
        `cannot register shared memory region '${name}' - invalid shm key '${key}' (expected '/<name>': one name of at most ${MAX_KEY_BYTES} bytes, no other '/', not '.' or '..')`,
      );
    }
    const folder = this.shmFolder();
    let fd: number;
    try {
      // O_NONBLOCK: a FIFO or device planted under the name must not stall the event loop on open.
      fd = fs.openSync(path.join(folder.path, base), fs.constants.O_RDWR | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      const why = code === 'ELOOP' ? ': it is a symbolic link (links are not followed)' : code === 'ENOENT' ? ': no such shared memory object' : code ? ` (${code})` : '';
      throw new InferError('INVALID_ARG', `Unable to open shared memory region: '${key}'${why}`);
    }
    const st = fs.fstatSync(fd);
    if (!st.isFile() || st.dev !== folder.dev) {
      fs.closeSync(fd);
      throw new InferError(
        'INVALID_ARG',
        `Unable to open shared memory region: '${key}': not a regular file in ${folder.path}`,
      );
    }
    return { fd, size: st.size };
  }

  private requireAllowed(): void {
    if (!this.allowed) throw new InferError('UNAVAILABLE', SHM_DISABLED_MESSAGE);
  }

  /**
   * `offset` and `byteSize` as the request carried them (any JSON value over HTTP): each must be a
   * non-negative integer, refused naming the field otherwise: `"offset": "16"` is refused, never
   * read as 0 (which would register the region 16 bytes early without a word).
   */
  register(name: string, key: string, offset: unknown, byteSize: unknown): void {
    this.requireAllowed();
    if (!name) throw new InferError('INVALID_ARG', 'shared memory region name must not be empty');
    const start = registerBound(name, 'offset', offset);
    const length = registerBound(name, 'byte_size', byteSize);
    if (this.regions.has(name)) {
      throw new InferError('ALREADY_EXISTS', `shared memory region '${name}' already in manager`);
    }
    if (this.regions.size >= MAX_SHM_REGIONS) {
      throw new InferError(
        'UNAVAILABLE',
        `cannot register shared memory region '${name}': ${this.regions.size} regions are registered, the most this server holds; unregister some first`,
      );
    }
    const { fd, size } = this.openKey(name, key);
    if (start + length > size) {
      fs.closeSync(fd);
      throw new InferError(
        'INVALID_ARG',
        `failed to register shared memory region '${name}': offset ${start} + byte_size ${length} exceeds the size ${size} of '${key}'`,
      );
    }
    this.regions.set(name, { name, key, offset: start, byte_size: length, fd });
  }

  /** Status of one region (NOT_FOUND if unknown) or of all. */
  status(name?: string): ShmRegionStatus[] {
    if (name) {
      const r = this.regions.get(name);
      if (!r) throw new InferError('NOT_FOUND', `Unable to find system shared memory region: '${name}'`);
      return [{ name: r.name, key: r.key, offset: r.offset, byte_size: r.byte_size }];
    }
    return [...this.regions.values()].map((r) => ({ name: r.name, key: r.key, offset: r.offset, byte_size: r.byte_size }));
  }

  /** Unregisters one region, or all when `name` is empty. */
  unregister(name?: string): void {
    const names = name ? [name] : [...this.regions.keys()];
    for (const n of names) {
      const r = this.regions.get(n);
      if (!r) continue;
      fs.closeSync(r.fd);
      this.regions.delete(n);
    }
  }

  private locate(name: string, offset: number, byteSize: number, tensor: string): Region {
    this.requireAllowed();
    const r = this.regions.get(name);
    if (!r) throw new InferError('INVALID_ARG', `Unable to find shared memory region: '${name}'`);
    if (offset < 0 || byteSize < 0 || offset + byteSize > r.byte_size) {
      throw new InferError(
        'INVALID_ARG',
        `Invalid offset + byte size for shared memory region: '${name}' (tensor '${tensor}': offset ${offset}, byte size ${byteSize}, region size ${r.byte_size})`,
      );
    }
    // The client owns the file and may have truncated it since registration.
    const size = fs.fstatSync(r.fd).size;
    if (r.offset + offset + byteSize > size) {
      throw new InferError(
        'INVALID_ARG',
        `shared memory region '${name}' (key '${r.key}') is now ${size} bytes, too small for tensor '${tensor}' at offset ${r.offset + offset} with byte size ${byteSize}`,
      );
    }
    return r;
  }

  /**
   * An input tensor's bytes out of a region. For a fixed-size datatype, the byte size must be what
   * the shape takes (core's check, with its words), checked before anything is read: the bytes are
   * copied (no mmap in Node), and a 4-byte FP32 input naming a 1 GB region made the server allocate
   * and read 1 GB on the main thread (~0.4 s, RSS +1 GB) before core refused the size.
   */
  readInput(ref: ShmRef, datatype: DataType, shape: readonly number[], tensor: string, model: string): Uint8Array {
    const expected = expectedByteSize(datatype, shape);
    if (expected !== undefined && ref.byteSize !== expected) {
      throw new InferError('INVALID_ARG', inputByteSizeMismatch(tensor, model, expected, ref.byteSize));
    }
    return this.read(ref.region, ref.offset, ref.byteSize, tensor);
  }

  /** Copies `byteSize` bytes of a tensor out of a region. */
  read(name: string, offset: number, byteSize: number, tensor: string): Uint8Array {
    const r = this.locate(name, offset, byteSize, tensor);
    const out = Buffer.allocUnsafe(byteSize);
    let done = 0;
    while (done < byteSize) {
      const n = fs.readSync(r.fd, out, done, byteSize - done, r.offset + offset + done);
      if (n === 0) throw new InferError('INVALID_ARG', `shared memory region '${name}' is shorter than registered (truncated while in use)`);
      done += n;
    }
    return out;
  }

  /** Writes an output into a region; the tensor must fit in `byteSize`. */
  write(name: string, offset: number, byteSize: number, data: Uint8Array, tensor: string): void {
    const r = this.locate(name, offset, byteSize, tensor);
    if (data.byteLength > byteSize) {
      throw new InferError(
        'INVALID_ARG',
        `shared memory size specified with the request for output '${tensor}' (${byteSize} bytes) should be at least ${data.byteLength} bytes to hold the results`,
      );
    }
    fs.writeSync(r.fd, data, 0, data.byteLength, r.offset + offset);
  }

  close(): void {
    this.unregister();
  }
}

/** A register request's `offset` or `byte_size`: a non-negative integer, or INVALID_ARG naming the field and value. */
function registerBound(region: string, field: 'offset' | 'byte_size', value: unknown): number {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  const shown = JSON.stringify(value) ?? String(value);
  throw new InferError(
    'INVALID_ARG',
    `cannot register shared memory region '${region}': '${field}' must be a non-negative integer, got ${shown.length > 64 ? `${shown.slice(0, 64)}...` : shown}`,
  );
}

/** Per-tensor shared-memory parameters (`shared_memory_region/offset/byte_size`), if present. */
export interface ShmRef {
  readonly region: string;
  readonly offset: number;
  readonly byteSize: number;
}

export function shmRefOf(params: Readonly<Record<string, unknown>> | undefined, tensor: string): ShmRef | undefined {
  const region = params?.['shared_memory_region'];
  if (region === undefined) return undefined;
  if (typeof region !== 'string') throw new InferError('INVALID_ARG', `'shared_memory_region' of '${tensor}' must be a string`);
  const num = (k: string, dflt?: number): number => {
    const v = params?.[k];
    if (v === undefined && dflt !== undefined) return dflt;
    const n = typeof v === 'bigint' ? Number(v) : v;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) {
      throw new InferError('INVALID_ARG', `'${k}' of '${tensor}' must be a non-negative integer`);
    }
    return n;
  };
  return { region, offset: num('shared_memory_offset', 0), byteSize: num('shared_memory_byte_size') };
}
