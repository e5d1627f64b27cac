/**
 * @tritium/repository-cloud/testing: real object-store servers for tests, on 127.0.0.1 at ephemeral
 * ports (an S3-compatible server, Azure's Blob emulator Azurite), plus a proxy that cuts
 * connections mid-download.
 *
 * @example
 * const s3 = await startS3Emulator();
 * await s3.createBucket('models');
 * await s3.uploadFolder('models', 'repo/', 'model_repository');
 * // tritium serve --model-repository s3://127.0.0.1:<port>/models/repo  (with S3_TEST_CREDENTIALS in env)
 * await s3.stop();
 */
export { startS3Emulator, S3_TEST_CREDENTIALS } from './s3-emulator.ts';
export type { S3Emulator } from './s3-emulator.ts';
export { startCuttingProxy } from './cutting-proxy.ts';
export type { CuttingProxy } from './cutting-proxy.ts';
export { startAzurite, AZURITE_ACCOUNT, AZURITE_KEY } from './azurite.ts';
export type { Azurite } from './azurite.ts';
export { startCredentialCheckingS3 } from './s3rver-server.ts';
export type { CredentialCheckingS3 } from './s3rver-server.ts';
