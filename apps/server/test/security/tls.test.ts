/**
 * TLS with Triton's flags (`--grpc-use-ssl`, `--grpc-use-ssl-mutual`, `--grpc-server-cert`,
 * `--grpc-server-key`, `--grpc-root-cert`) and the same for HTTPS (`--http-*`, beyond Triton),
 * against real certificates made here and real TLS clients (grpc-js, node:https).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GrpcInferenceServerClient, HttpInferenceServerClient, InferInput, InferenceServerException } from '@tritium/client';
import { parseServeFlags, FlagError } from '../../src/cli/flags.ts';
import { makeTestPki, type TestPki } from '../support/certificates.ts';
import { startTestServer, type TestServer } from '../support/start-server.ts';

let pki: TestPki;
let plain: TestServer;
let mutual: TestServer;

beforeAll(async () => {
  pki = makeTestPki();
  const f = pki.files;
  plain = await startTestServer(
    {
      grpcSsl: { useSsl: true, useMutualAuth: false, serverCert: f.serverCert, serverKey: f.serverKey },
      httpSsl: { useSsl: true, useMutualAuth: false, serverCert: f.serverCert, serverKey: f.serverKey },
    },
    undefined,
    ['simple'],
  );
  mutual = await startTestServer(
    {
      grpcSsl: { useSsl: true, useMutualAuth: true, serverCert: f.serverCert, serverKey: f.serverKey, rootCert: f.caCert },
      httpSsl: { useSsl: true, useMutualAuth: true, serverCert: f.serverCert, serverKey: f.serverKey, rootCert: f.caCert },
    },
    undefined,
    ['simple'],
  );
});
afterAll(async () => {
  await plain?.close();
  await mutual?.close();
  pki?.remove();
});

const input = () => new InferInput('INPUT0', [1, 2], 'FP32').setData(Float32Array.of(5, 6));

async function failure(p: Promise<unknown>): Promise<InferenceServerException> {
  const e = await p.then(() => undefined, (err: unknown) => err);
  expect(e).toBeInstanceOf(InferenceServerException);
  return e as InferenceServerException;
}

/** Runs `use` with a client and closes it. */
async function withGrpc<T>(url: string, options: ConstructorParameters<typeof GrpcInferenceServerClient>[1], use: (c: GrpcInferenceServerClient) => Promise<T>): Promise<T> {
  const c = new GrpcInferenceServerClient(url, options);
  try {
    return await use(c);
  } finally {
    c.close();
  }
}
async function withHttp<T>(url: string, options: ConstructorParameters<typeof HttpInferenceServerClient>[1], use: (c: HttpInferenceServerClient) => Promise<T>): Promise<T> {
  const c = new HttpInferenceServerClient(url, options);
  try {
    return await use(c);
  } finally {
    c.close();
  }
}

describe('gRPC over TLS (--grpc-use-ssl)', () => {
  it('a client trusting the CA infers; the server certificate is verified', async () => {
    const out = await withGrpc(plain.grpcUrl, { ssl: true, rootCertificates: pki.files.caCert }, (c) => c.infer('simple', [input()]));
    expect(Array.from(out.asTypedArray('OUTPUT0', 'FP32'))).toEqual([5, 6]);
  });

  it('a plaintext client, and a TLS client that does not trust the CA, are refused', async () => {
    const insecure = await failure(withGrpc(plain.grpcUrl, {}, (c) => c.isServerReady()));
    expect(insecure.status).toBe('StatusCode.UNAVAILABLE');
    const untrusted = await failure(withGrpc(plain.grpcUrl, { ssl: true }, (c) => c.isServerReady()));
    expect(untrusted.status).toBe('StatusCode.UNAVAILABLE');
  });
});

describe('gRPC mutual TLS (--grpc-use-ssl-mutual)', () => {
  it('a client with a certificate signed by --grpc-root-cert infers', async () => {
    const f = pki.files;
    const out = await withGrpc(mutual.grpcUrl, { rootCertificates: f.caCert, privateKey: f.clientKey, certificateChain: f.clientCert }, (c) =>
      c.infer('simple', [input()]),
    );
    expect(Array.from(out.asTypedArray('OUTPUT0', 'FP32'))).toEqual([5, 6]);
  });

  it('a client without a certificate, or with one from another CA, is refused', async () => {
    const f = pki.files;
    const none = await failure(withGrpc(mutual.grpcUrl, { rootCertificates: f.caCert }, (c) => c.isServerReady()));
    expect(none.status).toBe('StatusCode.UNAVAILABLE');
    const stranger = await failure(
      withGrpc(mutual.grpcUrl, { rootCertificates: f.caCert, privateKey: f.strangerKey, certificateChain: f.strangerCert }, (c) => c.isServerReady()),
    );
    expect(stranger.status).toBe('StatusCode.UNAVAILABLE');
  });
});

describe('HTTPS (--http-use-ssl, beyond Triton)', () => {
  it('a client trusting the CA infers over https://; PEM text works as well as a path', async () => {
    const out = await withHttp(`https://${plain.httpUrl}`, { rootCertificates: pki.files.caCert }, (c) => c.infer('simple', [input()]));
    expect(Array.from(out.asTypedArray('OUTPUT0', 'FP32'))).toEqual([5, 6]);
    const pem = (await import('node:fs')).readFileSync(pki.files.caCert, 'utf8');
    expect(await withHttp(plain.httpUrl, { ssl: true, rootCertificates: pem }, (c) => c.isServerReady())).toBe(true);
  });

  it('plain HTTP to the TLS port fails; a client that does not trust the CA fails unless insecure', async () => {
    await expect(withHttp(plain.httpUrl, {}, (c) => c.isServerReady())).rejects.toBeInstanceOf(InferenceServerException);
    const untrusted = await failure(withHttp(plain.httpUrl, { ssl: true }, (c) => c.isServerReady()));
    expect(untrusted.message).toMatch(/self.signed|unable to verify|certificate/i);
    expect(await withHttp(plain.httpUrl, { ssl: true, insecure: true }, (c) => c.isServerReady())).toBe(true);
  });
});

describe('HTTPS mutual TLS (--http-use-ssl-mutual)', () => {
  it('a client certificate signed by --http-root-cert is accepted', async () => {
    const f = pki.files;
    expect(await withHttp(mutual.httpUrl, { ssl: true, rootCertificates: f.caCert, privateKey: f.clientKey, certificateChain: f.clientCert }, (c) => c.isServerReady())).toBe(
      true,
    );
  });

  it('a client without a certificate, or with one from another CA, is refused at the handshake', async () => {
    const f = pki.files;
    await expect(withHttp(mutual.httpUrl, { ssl: true, rootCertificates: f.caCert }, (c) => c.isServerReady())).rejects.toBeInstanceOf(InferenceServerException);
    await expect(
      withHttp(mutual.httpUrl, { ssl: true, rootCertificates: f.caCert, privateKey: f.strangerKey, certificateChain: f.strangerCert }, (c) => c.isServerReady()),
    ).rejects.toBeInstanceOf(InferenceServerException);
  });
});

describe('flags', () => {
  it("parses Triton's SSL flags; mutual turns SSL on", () => {
    const f = pki.files;
    const o = parseServeFlags([
      '--model-repository=/m',
      '--grpc-use-ssl-mutual=true',
      `--grpc-server-cert=${f.serverCert}`,
      `--grpc-server-key=${f.serverKey}`,
      `--grpc-root-cert=${f.caCert}`,
      '--http-use-ssl',
      `--http-server-cert=${f.serverCert}`,
      `--http-server-key=${f.serverKey}`,
    ]);
    expect(o.grpcSsl).toEqual({ useSsl: true, useMutualAuth: true, serverCert: f.serverCert, serverKey: f.serverKey, rootCert: f.caCert });
    expect(o.httpSsl).toEqual({ useSsl: true, useMutualAuth: false, serverCert: f.serverCert, serverKey: f.serverKey });
  });

  it('SSL without a certificate and key, or mutual without a root certificate, is a flag error', () => {
    expect(() => parseServeFlags(['--model-repository=/m', '--grpc-use-ssl=true'])).toThrow(
      new FlagError('--grpc-use-ssl needs --grpc-server-cert and --grpc-server-key (PEM files)'),
    );
    expect(() => parseServeFlags(['--model-repository=/m', '--http-use-ssl-mutual', '--http-server-cert=a', '--http-server-key=b'])).toThrow(
      /--http-use-ssl-mutual needs --http-root-cert/,
    );
  });

  it('an unreadable certificate file stops the start with a message naming the flag and path', async () => {
    const e = await startTestServer(
      { grpcSsl: { useSsl: true, useMutualAuth: false, serverCert: '/nonexistent/cert.pem', serverKey: pki.files.serverKey } },
      undefined,
      ['simple'],
    ).then(
      () => undefined,
      (err: Error) => err,
    );
    expect(e?.message).toContain("failed to read --grpc-server-cert '/nonexistent/cert.pem'");
  });
});
