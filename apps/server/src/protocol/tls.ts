/**
 * Reads the PEM files of `--grpc-*` / `--http-*` SSL flags at start, so a missing or unreadable file
 * stops the server with a message naming the flag and path instead of failing the first handshake.
 */
import fs from 'node:fs';

/** TLS for one transport, as Triton's gRPC SSL options (`--grpc-use-ssl`, ...). */
export interface TlsOptions {
  useSsl: boolean;
  /** Require and verify a client certificate (implies useSsl). */
  useMutualAuth: boolean;
  serverCert?: string;
  serverKey?: string;
  /** CA certificates that client certificates must chain to (mutual TLS). */
  rootCert?: string;
}

export interface TlsMaterial {
  readonly cert: Buffer;
  readonly key: Buffer;
  /** CA bundle client certificates must chain to; set only with mutual TLS. */
  readonly ca?: Buffer;
  readonly mutual: boolean;
}

function read(flag: string, file: string | undefined): Buffer {
  if (!file) throw new Error(`--${flag} must name a PEM file`);
  try {
    return fs.readFileSync(file);
  } catch (e) {
    throw new Error(`failed to read --${flag} '${file}': ${(e as Error).message}`);
  }
}

/** The PEM material for one transport, or undefined when its SSL flag is off. */
export function loadTlsMaterial(prefix: 'grpc' | 'http', t: TlsOptions): TlsMaterial | undefined {
  if (!t.useSsl && !t.useMutualAuth) return undefined;
  const mutual = t.useMutualAuth;
  return {
    cert: read(`${prefix}-server-cert`, t.serverCert),
    key: read(`${prefix}-server-key`, t.serverKey),
    ca: mutual ? read(`${prefix}-root-cert`, t.rootCert) : undefined,
    mutual,
  };
}
