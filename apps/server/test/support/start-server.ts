/** Starts a full Tritium server (container, transports) on 127.0.0.1 with free ports, for tests. */
import { PassThrough } from 'node:stream';
import { GrpcInferenceServerClient, HttpInferenceServerClient } from '@tritium/client';
import type { InferenceServerApi } from '@tritium/core';
import type { Backend } from '@tritium/core/backend';
import { createContainer } from '../../src/container.ts';
import { defaultServeOptions, type ServeOptions } from '../../src/cli/serve-options.ts';
import { TritonLog } from '../../src/logging/triton-log.ts';
import { TOKENS } from '../../src/tokens.ts';
import type { TritiumServer } from '../../src/tritium-server.ts';
import { addSubBackend, faultBackend, identityBackend } from '@tritium/core/testing';
import { defaultInferenceServer } from '../../src/container.ts';
import { makeRepository, repeatBackend } from './repository.ts';

export interface TestServer {
  readonly server: TritiumServer;
  readonly api: InferenceServerApi;
  readonly options: ServeOptions;
  readonly http: HttpInferenceServerClient;
  readonly grpc: GrpcInferenceServerClient;
  readonly httpUrl: string;
  readonly grpcUrl: string;
  readonly metricsPort: number;
  readonly logs: () => string;
  close(): Promise<void>;
}

/**
 * Starts the server on a fresh temporary repository (core's InferenceServer, test backends), or
 * on `api` when given.
 */
export async function startTestServer(
  overrides: Partial<ServeOptions> = {},
  api?: InferenceServerApi,
  models?: readonly string[],
  backends?: readonly Backend[],
  /** Wraps core's InferenceServer (e.g. to observe when a request reaches it). */
  wrap: (api: InferenceServerApi) => InferenceServerApi = (a) => a,
): Promise<TestServer> {
  const repo = api || overrides.modelRepositories ? undefined : makeRepository(models);
  const options: ServeOptions = {
    ...defaultServeOptions(),
    modelRepositories: repo ? [repo.dir] : ['unused'],
    httpPort: 0,
    grpcPort: 0,
    metricsPort: 0,
    httpAddress: '127.0.0.1',
    grpcAddress: '127.0.0.1',
    metricsAddress: '127.0.0.1',
    exitTimeoutSecs: 5,
    ...overrides,
  };
  const sink = new PassThrough();
  let text = '';
  sink.on('data', (c: Buffer) => (text += c.toString()));
  const log = new TritonLog({ info: true, warning: true, error: true, verbose: 0, format: 'default' }, sink);
  const container = createContainer({
    options,
    log,
    backends: backends ?? [identityBackend(), addSubBackend(), faultBackend(), repeatBackend()],
    inferenceServer: api ? () => api : (deps) => wrap(defaultInferenceServer(deps)),
  });
  const server = container.get<TritiumServer>(TOKENS.TritiumServer);
  const ports = await server.start();
  const httpUrl = `127.0.0.1:${ports.http}`;
  const grpcUrl = `127.0.0.1:${ports.grpc}`;
  const http = new HttpInferenceServerClient(httpUrl);
  const grpc = new GrpcInferenceServerClient(grpcUrl);
  return {
    server,
    api: container.get<InferenceServerApi>(TOKENS.InferenceServer),
    options,
    http,
    grpc,
    httpUrl,
    grpcUrl,
    metricsPort: ports.metrics ?? 0,
    logs: () => text,
    async close() {
      http.close();
      grpc.close();
      await server.stop();
      repo?.remove();
    },
  };
}

/** Starts the server on given options (e.g. a prepared repository) and backends. */
export async function startTestServerWith(overrides: Partial<ServeOptions>, backends: readonly Backend[]): Promise<TestServer> {
  return startTestServer(overrides, undefined, undefined, backends);
}
