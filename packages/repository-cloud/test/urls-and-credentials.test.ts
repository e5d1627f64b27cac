/** Triton's repository URL syntax per provider, and its TRITON_CLOUD_CREDENTIAL_PATH file. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { azureRepositorySource, credentialFromFile, gcsRepositorySource, parseAzureUrl, parseGcsUrl, parseS3Url, s3RepositorySource } from '../src/index.ts';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'tritium-cloud-cred-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('s3:// URLs (core:src/filesystem/implementations/s3.h)', () => {
  it('parses AWS buckets, host:port endpoints over http, and https:// endpoints', () => {
    expect(parseS3Url('s3://bucket/path/to/repo')).toEqual({ endpoint: undefined, bucket: 'bucket', prefix: 'path/to/repo/', url: 's3://bucket/path/to/repo' });
    expect(parseS3Url('s3://bucket')).toMatchObject({ bucket: 'bucket', prefix: '', url: 's3://bucket' });
    expect(parseS3Url('s3://minio.local:9000/models/repo/')).toEqual({
      endpoint: 'http://minio.local:9000', bucket: 'models', prefix: 'repo/', url: 's3://minio.local:9000/models/repo',
    });
    expect(parseS3Url('s3://https://10.0.0.5:443//models//repo')).toMatchObject({ endpoint: 'https://10.0.0.5:443', bucket: 'models', prefix: 'repo/', url: 's3://https://10.0.0.5:443/models/repo' });
    expect(parseS3Url('s3://http://host:80/b')).toMatchObject({ endpoint: 'http://host:80', bucket: 'b', prefix: '' });
  });
  it('refuses URLs without a bucket', () => {
    expect(() => parseS3Url('s3://')).toThrow("Invalid bucket name: 's3://'");
    expect(() => parseS3Url('s3://host:9000/')).toThrow('No bucket name found in path: s3://host:9000/');
  });
});

describe('as:// and gs:// URLs', () => {
  it("parses Triton's Azure syntax, with or without the blob host suffix", () => {
    expect(parseAzureUrl('as://acct/container/path/repo')).toEqual({ account: 'acct', container: 'container', prefix: 'path/repo/', url: 'as://acct/container/path/repo' });
    expect(parseAzureUrl('as://acct.blob.core.windows.net/c')).toMatchObject({ account: 'acct', container: 'c', prefix: '' });
    expect(() => parseAzureUrl('as://acct')).toThrow('Invalid azure storage path: as://acct');
  });
  it('refuses an Azure URL with a query string without printing it (a SAS token is a secret)', () => {
    let message = '';
    try {
      parseAzureUrl('as://acct/c/repo?sv=2024&sig=SECRETSIGNATURE');
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('as://acct/c/repo?…');
    expect(message).not.toContain('SECRETSIGNATURE');
  });
  it('parses gs:// URLs', () => {
    expect(parseGcsUrl('gs://bucket//a/b/')).toEqual({ bucket: 'bucket', prefix: 'a/b/', url: 'gs://bucket/a/b' });
    expect(() => parseGcsUrl('gs://')).toThrow('No bucket name found in path: gs://');
  });
});

describe('TRITON_CLOUD_CREDENTIAL_PATH', () => {
  const file = path.join(tmp, 'cloud_credential.json');
  writeFileSync(
    file,
    JSON.stringify({
      gs: { '': '/creds/default.json', 'gs://gcs-bucket-002': '/creds/2.json' },
      s3: { '': { secret_key: 'S', key_id: 'K', region: 'us-east-1' }, 's3://s3-bucket-002': { key_id: 'K2', secret_key: 'S2', profile: '' } },
      as: { '': { account_str: 'a', account_key: 'k' } },
    }),
  );
  const env = { TRITON_CLOUD_CREDENTIAL_PATH: file };

  it('picks the longest name that starts the path', () => {
    expect(credentialFromFile('gs', 'gs://gcs-bucket-002/model_repository', env)).toBe('/creds/2.json');
    expect(credentialFromFile('gs', 'gs://any-other-gcs-bucket', env)).toBe('/creds/default.json');
    expect(credentialFromFile('s3', 's3://s3-bucket-002/repo', env)).toMatchObject({ key_id: 'K2' });
    expect(credentialFromFile('s3', 's3://elsewhere', env)).toMatchObject({ key_id: 'K' });
    expect(credentialFromFile('s3', 's3://x', {})).toBeUndefined();
  });

  it('a missing section or no matching name is an error naming the path', () => {
    writeFileSync(path.join(tmp, 'only-gs.json'), JSON.stringify({ gs: { 'gs://b': '/x.json' } }));
    const only = { TRITON_CLOUD_CREDENTIAL_PATH: path.join(tmp, 'only-gs.json') };
    expect(() => credentialFromFile('s3', 's3://b/repo', only)).toThrow('Cannot match credential for path s3://b/repo');
    expect(() => credentialFromFile('gs', 'gs://other/repo', only)).toThrow('Cannot match credential for path gs://other/repo');
  });

  it('an unreadable or malformed file is named, and its content never printed', () => {
    const bad = path.join(tmp, 'bad.json');
    writeFileSync(bad, '{ "s3": { "": { "secret_key": "TOPSECRET" ');
    let message = '';
    try {
      s3RepositorySource('s3://b/r', { env: { TRITON_CLOUD_CREDENTIAL_PATH: bad } });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain(bad);
    expect(message).not.toContain('TOPSECRET');
    expect(() => azureRepositorySource('as://a/c', { env: { TRITON_CLOUD_CREDENTIAL_PATH: path.join(tmp, 'absent.json') } })).toThrow(/absent\.json/);
    writeFileSync(path.join(tmp, 'gs-object.json'), JSON.stringify({ gs: { '': { path: '/x' } } }));
    expect(() => gcsRepositorySource('gs://b', { env: { TRITON_CLOUD_CREDENTIAL_PATH: path.join(tmp, 'gs-object.json') } })).toThrow(/"gs" entry must be the path/);
  });
});
