/**
 * @tritium/onnx-gen — deterministic ONNX test models written in TypeScript. Identical options give
 * identical bytes (seeded weights, ordered protobuf fields); nothing generated is committed.
 */
export { GraphBuilder } from './graph-builder.ts';
export type { Dim, AttributeValue, InitializerValues, ModelOptions } from './graph-builder.ts';
export { Rng } from './rng.ts';
export { ONNX_ELEMENT_TYPE, ORT_NODE_ELEMENT_TYPES } from './dtypes.ts';
export type { ElementType } from './dtypes.ts';
export { buildAddSubModel, buildNoBatchModel, buildIdentityModel, buildMultiIdentityModel, buildSequenceModel, buildScalarModel } from './op-models.ts';
export type { AddSubOptions, IdentityOptions, SequenceOptions, ScalarOptions } from './op-models.ts';
export { buildSequenceControlModel, buildAccumulatorStateModel } from './sequence-models.ts';
export type { SequenceControlModelOptions } from './sequence-models.ts';
export { buildLoopModel } from './loop-model.ts';
export type { LoopModelOptions } from './loop-model.ts';
export { buildBertModel } from './bert.ts';
export type { BertOptions, BertNames, BertOverrides } from './bert.ts';
export { writeModel } from './write.ts';
export { onnx } from './proto.ts';
