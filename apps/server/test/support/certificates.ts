/**
 * Real X.509 material for TLS tests, made fresh by each test run: a CA, a server certificate for
 * 127.0.0.1/localhost signed by it, a client certificate signed by it, and a second CA (a client
 * certificate from it must be refused). Keys come from Node's crypto (RSA 2048); node-forge signs
 * the certificates. Files are written to a temporary folder, as the server's flags take paths.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import forge from 'node-forge';

interface Issued {
  readonly certPem: string;
  readonly keyPem: string;
}

function keyPair(): { privatePem: string; publicKey: forge.pki.PublicKey; privateKey: forge.pki.rsa.PrivateKey } {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const privatePem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  return {
    privatePem,
    privateKey: forge.pki.privateKeyFromPem(privatePem) as forge.pki.rsa.PrivateKey,
    publicKey: forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString()),
  };
}

let serial = 1;

function issue(
  subjectCn: string,
  kind: 'ca' | 'server' | 'client',
  issuer?: { cert: forge.pki.Certificate; key: forge.pki.rsa.PrivateKey },
): Issued & { cert: forge.pki.Certificate; key: forge.pki.rsa.PrivateKey } {
  const keys = keyPair();
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = (serial++).toString(16).padStart(2, '0');
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 24 * 3600_000);
  const subject = [{ name: 'commonName', value: subjectCn }];
  cert.setSubject(subject);
  cert.setIssuer(issuer ? issuer.cert.subject.attributes : subject);
  const extensions: object[] = [{ name: 'basicConstraints', cA: kind === 'ca' }];
  if (kind === 'ca') extensions.push({ name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true });
  else {
    extensions.push({ name: 'keyUsage', digitalSignature: true, keyEncipherment: true });
    extensions.push({ name: 'extKeyUsage', serverAuth: kind === 'server', clientAuth: kind === 'client' });
  }
  if (kind === 'server') {
    extensions.push({
      name: 'subjectAltName',
      altNames: [
        { type: 7, ip: '127.0.0.1' },
        { type: 2, value: 'localhost' },
      ],
    });
  }
  cert.setExtensions(extensions);
  cert.sign(issuer?.key ?? keys.privateKey, forge.md.sha256.create());
  return { cert, key: keys.privateKey, certPem: forge.pki.certificateToPem(cert), keyPem: keys.privatePem };
}

export interface TestPki {
  readonly dir: string;
  /** Paths of PEM files. */
  readonly files: {
    readonly caCert: string;
    readonly serverCert: string;
    readonly serverKey: string;
    readonly clientCert: string;
    readonly clientKey: string;
    readonly strangerCert: string;
    readonly strangerKey: string;
  };
  remove(): void;
}

/** A CA with a server and a client certificate, plus a client certificate from another CA. */
export function makeTestPki(): TestPki {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tritium-pki-'));
  const ca = issue('Tritium Test CA', 'ca');
  const server = issue('127.0.0.1', 'server', ca);
  const client = issue('tritium-test-client', 'client', ca);
  const otherCa = issue('Someone Else CA', 'ca');
  const stranger = issue('stranger', 'client', otherCa);
  const write = (name: string, pem: string) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, pem, { mode: 0o600 });
    return file;
  };
  return {
    dir,
    files: {
      caCert: write('ca.pem', ca.certPem),
      serverCert: write('server.pem', server.certPem),
      serverKey: write('server.key', server.keyPem),
      clientCert: write('client.pem', client.certPem),
      clientKey: write('client.key', client.keyPem),
      strangerCert: write('stranger.pem', stranger.certPem),
      strangerKey: write('stranger.key', stranger.keyPem),
    },
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}
