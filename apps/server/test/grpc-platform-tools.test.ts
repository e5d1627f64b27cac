/**
 * gRPC as platform tools use it, with clients from npm against `tritium serve`: a reflection client
 * (grpc-js-reflection-client) lists and calls the services over reflection v1 and v1alpha with no
 * proto file; gRPC's health client (grpc-health-check's service definition) runs Check and Watch;
 * an ensemble's pipeline batching reads back over gRPC ModelConfig while ensemble_scheduling stays
 * the member of Triton's `scheduling_choice` oneof.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { credentials, makeClientConstructor, status, type Client, type ClientReadableStream, type ServiceError } from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import { GrpcReflection } from 'grpc-js-reflection-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServeProcess, type ServeProcess } from './support/serve-process.ts';

const repo = mkdtempSync(path.join(os.tmpdir(), 'tritium-grpc-tools-'));

function model(name: string, config: string): void {
  mkdirSync(path.join(repo, name, '1'), { recursive: true });
  writeFileSync(path.join(repo, name, 'config.pbtxt'), config);
}

model(
  'ident',
  `backend: "identity"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
`,
);
model(
  'pipe',
  `platform: "ensemble"
max_batch_size: 8
input [ { name: "X" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "Y" data_type: TYPE_FP32 dims: [ 4 ] } ]
dynamic_batching { preferred_batch_size: [ 4 ] max_queue_delay_microseconds: 300 }
ensemble_scheduling { step [ { model_name: "ident" model_version: -1 input_map { key: "INPUT0" value: "X" } output_map { key: "OUTPUT0" value: "Y" } } ] }
`,
);

type Callback<T> = (err: ServiceError | null, value?: T) => void;
/** The ModelConfig fields read here, as a client built from the reflected descriptor decodes them. */
interface ReflectedConfig {
  readonly scheduling_choice?: string;
  readonly dynamic_batching?: unknown;
  readonly ensemble_scheduling: { readonly step: ReadonlyArray<{ readonly model_name: string }> };
  readonly parameters: ReadonlyArray<{ readonly key: string; readonly value: { readonly string_value: string } }>;
}
type InferenceClient = Client & {
  ServerLive(req: object, cb: Callback<{ live: boolean }>): void;
  ModelConfig(req: { name: string }, cb: Callback<{ config: ReflectedConfig }>): void;
};
type HealthClient = Client & {
  Check(req: { service: string }, cb: Callback<{ status: string }>): void;
  Watch(req: { service: string }): ClientReadableStream<{ status: string }>;
};
const HealthClient = makeClientConstructor(healthService, 'grpc.health.v1.Health') as unknown as new (
  address: string,
  creds: ReturnType<typeof credentials.createInsecure>,
) => HealthClient;

function call<T>(fn: (cb: Callback<T>) => void): Promise<T> {
  return new Promise((resolve, reject) => fn((err, value) => (err ? reject(err) : resolve(value as T))));
}

/** The messages a Watch stream delivered, and how it ended. */
function watch(client: HealthClient): { messages: string[]; ended: Promise<ServiceError | undefined>; stream: ClientReadableStream<{ status: string }> } {
  const messages: string[] = [];
  const stream = client.Watch({ service: '' });
  stream.on('data', (m: { status: string }) => messages.push(m.status));
  const ended = new Promise<ServiceError | undefined>((resolve) => {
    stream.on('error', (e: ServiceError) => resolve(e));
    stream.on('end', () => resolve(undefined));
  });
  return { messages, ended, stream };
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400 && !check(); i++) await new Promise((r) => setTimeout(r, 25));
  expect(check(), what).toBe(true);
}

let server: ServeProcess;
let address = '';

beforeAll(async () => {
  server = startServeProcess(['--model-repository', repo]);
  address = `127.0.0.1:${(await server.started).grpc}`;
}, 60_000);

afterAll(async () => {
  await server?.stop();
  rmSync(repo, { recursive: true, force: true });
});

describe('gRPC server reflection', () => {
  for (const version of ['v1', 'v1alpha']) {
    it(`${version}: lists the services and calls them with no proto file`, async () => {
      const reflection = new GrpcReflection(address, credentials.createInsecure(), {}, version);
      expect((await reflection.listServices()).sort()).toEqual(['grpc.health.v1.Health', 'inference.GRPCInferenceService']);
      const methods = (await reflection.listMethods('inference.GRPCInferenceService')).map((m) => m.name);
      expect(methods).toEqual(expect.arrayContaining(['ServerLive', 'ModelInfer', 'ModelStreamInfer', 'ModelConfig', 'RepositoryIndex']));

      const descriptor = await reflection.getDescriptorBySymbol('inference.GRPCInferenceService');
      const pkg = descriptor.getPackageObject({ keepCase: true, oneofs: true, longs: String, enums: String, defaults: false }) as unknown as {
        inference: { GRPCInferenceService: new (a: string, c: unknown) => InferenceClient };
      };
      const client = new pkg.inference.GRPCInferenceService(address, credentials.createInsecure());
      try {
        expect(await call((cb) => client.ServerLive({}, cb))).toEqual({ live: true });
        const { config } = await call<{ config: ReflectedConfig }>((cb) => client.ModelConfig({ name: 'pipe' }, cb));
        // Triton's oneof keeps ensemble_scheduling; the pipeline's batching is in parameters.
        expect(config.scheduling_choice).toBe('ensemble_scheduling');
        expect(config.dynamic_batching).toBeUndefined();
        expect(config.ensemble_scheduling.step[0].model_name).toBe('ident');
        // A map reads as its entries here: the descriptor reflection serves declares them as messages.
        const parameters = config.parameters;
        expect(parameters.map((p) => p.key)).toEqual(['tritium.dynamic_batching']);
        expect(JSON.parse(parameters[0]!.value.string_value)).toMatchObject({ preferred_batch_size: [4], max_queue_delay_microseconds: 300 });
      } finally {
        client.close();
      }
    });
  }
});

describe('grpc.health.v1', () => {
  it('Check answers SERVING while the server is ready', async () => {
    const client = new HealthClient(address, credentials.createInsecure());
    try {
      expect(await call((cb) => client.Check({ service: '' }, cb))).toEqual({ status: 'SERVING' });
    } finally {
      client.close();
    }
  });

  it('Watch: SERVING at once, NOT_SERVING when the server stops, then UNAVAILABLE', async () => {
    const client = new HealthClient(address, credentials.createInsecure());
    try {
      const w = watch(client);
      await until(() => w.messages.length === 1, 'first status');
      expect(w.messages).toEqual(['SERVING']);
      const stopped = server.stop();
      const end = await w.ended;
      expect(w.messages).toEqual(['SERVING', 'NOT_SERVING']);
      expect(end?.code).toBe(status.UNAVAILABLE);
      expect(end?.details).toBe('Server is stopping');
      expect(await stopped).toBe(0);
    } finally {
      client.close();
    }
  });
});

describe('bounds and switches', () => {
  it('--grpc-health-max-watches bounds Watch streams; --grpc-reflection=false leaves reflection out', async () => {
    const bounded = startServeProcess(['--model-repository', repo, '--grpc-health-max-watches', '1', '--grpc-reflection=false']);
    const at = `127.0.0.1:${(await bounded.started).grpc}`;
    const client = new HealthClient(at, credentials.createInsecure());
    try {
      const first = watch(client);
      await until(() => first.messages.length === 1, 'first watch');
      const second = watch(client);
      const refused = await second.ended;
      expect(refused?.code).toBe(status.RESOURCE_EXHAUSTED);
      expect(refused?.details).toBe('too many health Watch streams open: at most 1 (--grpc-health-max-watches)');
      first.stream.cancel();
      await first.ended;
      // The slot is free again once the server has seen the cancel (a refusal before then is retried).
      let third = watch(client);
      for (let i = 0; i < 100; i++) {
        const first = await Promise.race([third.ended.then(() => 'ended'), until(() => third.messages.length > 0, 'third watch').then(() => 'message')]);
        if (first === 'message') break;
        await new Promise((r) => setTimeout(r, 50));
        third = watch(client);
      }
      expect(third.messages).toEqual(['SERVING']);
      third.stream.cancel();

      const reflection = new GrpcReflection(at, credentials.createInsecure(), {}, 'v1');
      await expect(reflection.listServices()).rejects.toThrow(/UNIMPLEMENTED|unimplemented/i);
    } finally {
      client.close();
      await bounded.stop();
    }
  });
});
