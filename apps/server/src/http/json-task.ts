/** Messages between the HTTP transport and its JSON worker (json-parser.ts ↔ json-worker-entry.ts). */
import type { ErrorCode } from '@tritium/core';
import type { TransportLimits } from '../protocol/limits.ts';
import type { GenerateSpec } from './generate.ts';

export type JsonTask = { readonly id: number; readonly bytes: Uint8Array } & (
  | { readonly kind: 'json' }
  | { readonly kind: 'infer'; readonly binaryLength: number; readonly model: string; readonly limits: TransportLimits }
  | { readonly kind: 'generate'; readonly spec: GenerateSpec; readonly model: string; readonly limits: TransportLimits }
);

export type WireJsonError =
  | { readonly kind: 'infer'; readonly code: ErrorCode; readonly message: string }
  | { readonly kind: 'transport'; readonly message: string; readonly httpStatus: number; readonly grpcStatus: number };

export type JsonTaskResult = { readonly id: number } & ({ readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: WireJsonError });
