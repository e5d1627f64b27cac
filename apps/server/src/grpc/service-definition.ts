/**
 * grpc-js service definitions for `inference.GRPCInferenceService` and `grpc.health.v1.Health`.
 * ModelInfer/ModelStreamInfer use the hand-written codec; every other method goes through
 * protobufjs. A message that fails to decode does not throw inside grpc-js (which would answer
 * INTERNAL): it arrives as a DecodeFailure so the handler answers INVALID_ARGUMENT.
 */
import type { ServiceDefinition } from '@grpc/grpc-js';
import {
  checkWireFormat,
  decodeInferRequest,
  encodeInferResponse,
  plainCodec,
  tritonProtoRoot,
  TO_OBJECT_OPTIONS,
  type WireInferResponse,
} from '@tritium/client/proto';
import { capErrorMessage } from '../protocol/status.ts';

export class DecodeFailure {
  readonly message: string;
  constructor(message: string) {
    this.message = capErrorMessage(message);
  }
}

function safe<T>(decode: (buf: Buffer) => T, what: string): (buf: Buffer) => T | DecodeFailure {
  return (buf) => {
    try {
      return decode(buf);
    } catch (e) {
      return new DecodeFailure(`failed to parse ${what}: ${(e as Error).message}`);
    }
  };
}

/** Methods whose request settings carry oneofs that must say which member is set. */
const ONEOF_REQUESTS = new Set(['LogSettings', 'RepositoryModelLoad', 'RepositoryModelUnload']);

export const INFERENCE_SERVICE = 'inference.GRPCInferenceService';

/** One method's entry: grpc-js types the table's entries loosely, each handler states its own types. */
type MethodEntry = ServiceDefinition[string];

export function inferenceServiceDefinition(): ServiceDefinition {
  const service = tritonProtoRoot().lookupService(INFERENCE_SERVICE);
  const def: Record<string, MethodEntry> = {};
  for (const method of service.methodsArray) {
    method.resolve();
    const path = `/${INFERENCE_SERVICE}/${method.name}`;
    if (method.name === 'ModelInfer' || method.name === 'ModelStreamInfer') {
      const stream = method.name === 'ModelStreamInfer';
      def[method.name] = {
        path,
        requestStream: stream,
        responseStream: stream,
        requestSerialize: () => Buffer.alloc(0),
        requestDeserialize: safe(decodeInferRequest, 'ModelInferRequest'),
        // ModelStreamInfer's handler encodes its responses itself (it counts the bytes it queues).
        responseSerialize: stream ? (m: Buffer) => m : (m: WireInferResponse) => encodeInferResponse(m),
        responseDeserialize: () => ({}),
        originalName: method.name,
      };
      continue;
    }
    const req = plainCodec(
      method.resolvedRequestType!.fullName.slice(1),
      ONEOF_REQUESTS.has(method.name) ? { ...TO_OBJECT_OPTIONS, oneofs: true } : TO_OBJECT_OPTIONS,
    );
    const res = plainCodec(method.resolvedResponseType!.fullName.slice(1));
    def[method.name] = {
      path,
      requestStream: false,
      responseStream: false,
      requestSerialize: req.encode,
      requestDeserialize: safe((buf) => {
        checkWireFormat(buf);
        return req.decode(buf);
      }, method.requestType),
      responseSerialize: res.encode,
      responseDeserialize: res.decode,
      originalName: method.name,
    };
  }
  return def;
}

export function healthServiceDefinition(): ServiceDefinition {
  const req = plainCodec('grpc.health.v1.HealthCheckRequest');
  const res = plainCodec('grpc.health.v1.HealthCheckResponse');
  const method = (name: 'Check' | 'Watch'): MethodEntry => ({
    path: `/grpc.health.v1.Health/${name}`,
    requestStream: false,
    responseStream: name === 'Watch',
    requestSerialize: req.encode,
    requestDeserialize: safe(req.decode, 'HealthCheckRequest'),
    responseSerialize: res.encode,
    responseDeserialize: res.decode,
    originalName: name,
  });
  return { Check: method('Check'), Watch: method('Watch') };
}
