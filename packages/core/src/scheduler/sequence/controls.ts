/**
 * The control inputs a sequence batcher adds to each request it sends to the model (Triton's
 * CreateBooleanControlTensors / SetControlTensors): START, END and READY with the config's
 * false/true values (int32, fp32 or bool), CORRID carrying the correlation ID (UINT64, INT64,
 * UINT32, INT32 or STRING). Shape [1], with the batch dimension ([1, 1]) when the model batches.
 */
import { InferError } from '../../errors.ts';
import type { ModelConfig, SequenceControlKind } from '../../config/model-config.ts';
import { configToWireDataType, type DataType } from '../../tensor/data-type.ts';
import type { Tensor } from '../../tensor/tensor.ts';
import { encodeBytesElements } from '../../tensor/bytes-elements.ts';
import type { CorrelationId, InferRequest } from '../../types.ts';
import { requestTag } from '../../server/request-validation.ts';
import { correlationUint64 } from './correlation-id.ts';

/** What a row of a batch tells the model through the controls. */
export interface ControlFlags {
  readonly start: boolean;
  readonly end: boolean;
  /** False on the filler rows of a direct batch (Triton's null requests). */
  readonly ready: boolean;
}

interface BooleanControl {
  readonly kind: 'start' | 'end' | 'ready';
  readonly off: Tensor;
  readonly on: Tensor;
}

const BOOLEAN_KINDS: ReadonlyArray<[SequenceControlKind, BooleanControl['kind']]> = [
  ['CONTROL_SEQUENCE_START', 'start'],
  ['CONTROL_SEQUENCE_END', 'end'],
  ['CONTROL_SEQUENCE_READY', 'ready'],
];

function find(config: ModelConfig, kind: SequenceControlKind): { name: string; control: NonNullable<ModelConfig['sequence_batching']>['control_input'][number]['control'][number] } | undefined {
  for (const input of config.sequence_batching?.control_input ?? []) {
    for (const control of input.control) if (control.kind === kind) return { name: input.name, control };
  }
  return undefined;
}

function scalar(name: string, datatype: DataType, shape: readonly number[], write: (view: DataView) => void, size: number): Tensor {
  const data = new Uint8Array(size);
  write(new DataView(data.buffer));
  return { name, datatype, shape, data };
}

/** The control tensors of one model, built once at load. */
export class SequenceControls {
  /** Names of every control input, in config order (backends plan them as inputs). */
  readonly names: readonly string[];
  private readonly boolean: BooleanControl[] = [];
  private readonly corrid: { readonly name: string; readonly datatype: DataType } | undefined;
  private readonly shape: readonly number[];
  private readonly model: string;

  constructor(config: ModelConfig) {
    this.model = config.name;
    this.shape = config.max_batch_size > 0 ? [1, 1] : [1];
    this.names = (config.sequence_batching?.control_input ?? []).map((c) => c.name);
    for (const [kind, field] of BOOLEAN_KINDS) {
      const found = find(config, kind);
      if (!found) continue;
      const c = found.control;
      let make: (on: boolean) => Tensor;
      if (c.int32_false_true.length === 2) {
        make = (on) => scalar(found.name, 'INT32', this.shape, (v) => v.setInt32(0, c.int32_false_true[on ? 1 : 0]!, true), 4);
      } else if (c.fp32_false_true.length === 2) {
        make = (on) => scalar(found.name, 'FP32', this.shape, (v) => v.setFloat32(0, c.fp32_false_true[on ? 1 : 0]!, true), 4);
      } else {
        make = (on) => scalar(found.name, 'BOOL', this.shape, (v) => v.setUint8(0, c.bool_false_true[on ? 1 : 0] ? 1 : 0), 1);
      }
      this.boolean.push({ kind: field, off: make(false), on: make(true) });
    }
    const corrid = find(config, 'CONTROL_SEQUENCE_CORRID');
    if (corrid) {
      const datatype = configToWireDataType(corrid.control.data_type);
      if (!datatype) throw new InferError('INVALID_ARG', `unexpected data type for control CONTROL_SEQUENCE_CORRID for ${config.name}`);
      this.corrid = { name: corrid.name, datatype };
    }
  }

  /**
   * Triton's request check (InferenceRequest::Prepare): a string ID needs a STRING CORRID, a
   * numeric one a numeric CORRID. Throws INVALID_ARG otherwise.
   */
  checkRequest(request: InferRequest, id: CorrelationId): void {
    if (!this.corrid) return;
    const stringId = typeof id === 'string';
    const stringControl = this.corrid.datatype === 'BYTES';
    if (stringId === stringControl) return;
    throw new InferError(
      'INVALID_ARG',
      `${requestTag(request)}sequence batching control '${this.corrid.name}' data-type is '${stringId ? 'BYTES' : 'UINT64'}', but model '${this.model}' expects '${this.corrid.datatype}'`,
    );
  }

  /** The control tensors of one row: `id` undefined on filler rows (CORRID 0, as Triton sends). */
  tensors(flags: ControlFlags, id: CorrelationId | undefined): Tensor[] {
    const out: Tensor[] = [];
    for (const b of this.boolean) out.push(flags[b.kind] ? b.on : b.off);
    if (this.corrid) out.push(this.corridTensor(id));
    return out;
  }

  private corridTensor(id: CorrelationId | undefined): Tensor {
    const { name, datatype } = this.corrid!;
    if (datatype === 'BYTES') {
      const text = typeof id === 'string' ? id : '';
      return { name, datatype, shape: this.shape, data: encodeBytesElements([text]) };
    }
    const value = id === undefined || typeof id === 'string' ? 0n : correlationUint64(id);
    // Triton copies the first bytes of the uint64 (little-endian): the low 32 bits for 32-bit types.
    const size = datatype === 'UINT64' || datatype === 'INT64' ? 8 : 4;
    return scalar(name, datatype, this.shape, (v) => (size === 8 ? v.setBigUint64(0, value, true) : v.setUint32(0, Number(value & 0xffffffffn), true)), size);
  }
}

/** A tensor a sequence model gets or gives beyond its config inputs and outputs. */
export interface SequenceTensorSpec {
  readonly name: string;
  readonly datatype: DataType;
  /** Dims without the batch dimension ([1] for controls; the state's dims, -1 = any). */
  readonly dims: readonly number[];
  readonly kind: 'control' | 'state';
}

/**
 * What a backend must plan for a model with `sequence_batching`: the inputs the sequence batcher
 * adds to every request (each control present, in START, END, READY, CORRID order, then each state
 * input) and the state outputs it expects back (those that are not config outputs already).
 */
export function sequenceTensors(config: ModelConfig): { inputs: SequenceTensorSpec[]; outputs: SequenceTensorSpec[] } {
  const inputs: SequenceTensorSpec[] = [];
  const outputs: SequenceTensorSpec[] = [];
  if (!config.sequence_batching) return { inputs, outputs };
  for (const [kind] of BOOLEAN_KINDS) {
    const found = find(config, kind);
    if (!found) continue;
    const c = found.control;
    const datatype: DataType = c.int32_false_true.length === 2 ? 'INT32' : c.fp32_false_true.length === 2 ? 'FP32' : 'BOOL';
    inputs.push({ name: found.name, datatype, dims: [1], kind: 'control' });
  }
  const corrid = find(config, 'CONTROL_SEQUENCE_CORRID');
  const corridType = corrid ? configToWireDataType(corrid.control.data_type) : undefined;
  if (corrid && corridType) inputs.push({ name: corrid.name, datatype: corridType, dims: [1], kind: 'control' });
  const declared = new Set(config.output.map((o) => o.name));
  for (const s of config.sequence_batching.state) {
    const datatype = configToWireDataType(s.data_type);
    if (!datatype) continue;
    inputs.push({ name: s.input_name, datatype, dims: [...s.dims], kind: 'state' });
    if (!declared.has(s.output_name)) outputs.push({ name: s.output_name, datatype, dims: [...s.dims], kind: 'state' });
  }
  return { inputs, outputs };
}
