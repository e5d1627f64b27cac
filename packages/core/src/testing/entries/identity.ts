/** Worker entry of the `identity` test backend: output i = input i (any datatype and shape). */
import type { CreateWorkerInstance } from '../../worker/types.ts';
import { identityOutputs, perRequest, respond, type TestModelInit } from './common.ts';

export const createInstance: CreateWorkerInstance<TestModelInit> = async (init) => ({
  execute: (batch) => perRequest(batch, (r) => respond(init, r, identityOutputs(init, r))),
});
