/**
 * TLS settings shared by both clients, as tritonclient takes them: a PEM value is either a file path
 * (tritonclient's `root_certificates`, `ssl_options={'ca_certs': ...}`) or the PEM text / bytes itself.
 */
import fs from 'node:fs';

/** A file path, or PEM text (starting with `-----BEGIN`), or PEM bytes. */
export type PemSource = string | Uint8Array;

export interface ClientTlsOptions {
  /** CA certificates that sign the server's certificate (default: the system's trusted roots). */
  readonly rootCertificates?: PemSource;
  /** The client's private key, for mutual TLS. */
  readonly privateKey?: PemSource;
  /** The client's certificate chain, for mutual TLS. */
  readonly certificateChain?: PemSource;
}

/** The PEM bytes of `source` (read from disk when it is a path). */
export function pemBytes(source: PemSource | undefined): Buffer | undefined {
  if (source === undefined) return undefined;
  if (typeof source !== 'string') return Buffer.from(source);
  return source.trimStart().startsWith('-----BEGIN') ? Buffer.from(source) : fs.readFileSync(source);
}
