/**
 * System shared memory regions registered by clients (Triton's system_shared_memory extension).
 * A region is a POSIX shm object, i.e. the file `/dev/shm/<key>`; inputs are read from it and
 * outputs written into it at `offset + tensor offset`. Registering requires `--allow-client-shm`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { InferError } from '@tritium/core';

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

export class SharedMemoryRegistry {
  private readonly regions = new Map<string, Region>();

  constructor(
    readonly allowed: boolean,
    /** Folder holding POSIX shm objects. */
    private readonly shmDir = '/dev/shm',
  ) {}

  private requireAllowed(): void {
    if (!this.allowed) throw new InferError('UNAVAILABLE', SHM_DISABLED_MESSAGE);
  }

  register(name: string, key: string, offset: number, byteSize: number): void {
    this.requireAllowed();
    if (!name) throw new InferError('INVALID_ARG', 'shared memory region name must not be empty');
    if (this.regions.has(name)) {
      throw new InferError('ALREADY_EXISTS', `shared memory region '${name}' already in manager`);
    }
    const base = key.replace(/^\/+/, '');
    if (!base || base.includes('/') || base === '..' || base === '.') {
      throw new InferError('INVALID_ARG', `Unable to open shared memory region: '${key}'`);
    }
    let fd: number;
    try {
      fd = fs.openSync(path.join(this.shmDir, base), 'r+');
    } catch {
      throw new InferError('INVALID_ARG', `Unable to open shared memory region: '${key}'`);
    }
    const size = fs.fstatSync(fd).size;
    if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(byteSize) || offset < 0 || byteSize < 0 || offset + byteSize > size) {
      fs.closeSync(fd);
      throw new InferError(
        'INVALID_ARG',
        `failed to register shared memory region '${name}': offset ${offset} + byte_size ${byteSize} exceeds the size ${size} of '${key}'`,
      );
    }
    this.regions.set(name, { name, key, offset, byte_size: byteSize, fd });
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
    return r;
  }

  /** Copies `byteSize` bytes of a tensor out of a region. */
  read(name: string, offset: number, byteSize: number, tensor: string): Uint8Array {
    const r = this.locate(name, offset, byteSize, tensor);
    const out = Buffer.allocUnsafe(byteSize);
    let done = 0;
    while (done < byteSize) {
      const n = fs.readSync(r.fd, out, done, byteSize - done, r.offset + offset + done);
      if (n === 0) throw new InferError('INTERNAL', `shared memory region '${name}' is shorter than registered`);
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
