/**
 * gRPC server reflection (`grpc.reflection.v1` and `grpc.reflection.v1alpha`, from @grpc/reflection),
 * so grpcurl, Postman and other reflection clients list and call `inference.GRPCInferenceService`
 * and `grpc.health.v1.Health` without proto files. It describes the protos the server is built from
 * (packages/client/proto), which are Triton's; `--grpc-reflection=false` leaves it out.
 */
import type { Server } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { PROTO_DIR } from '@tritium/client/proto';

/** The services reflection lists: every service the gRPC port serves. */
export const REFLECTED_PROTOS = ['grpc_service.proto', 'health.proto'] as const;

export function addReflection(server: Pick<Server, 'addService'>): void {
  const definition = loadSync([...REFLECTED_PROTOS], { includeDirs: [PROTO_DIR], keepCase: true });
  new ReflectionService(definition).addToServer(server);
}
