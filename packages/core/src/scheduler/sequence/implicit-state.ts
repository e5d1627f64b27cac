/**
 * Triton's implicit state (sequence_batching.state, sequence_state.cc): a state output the model
 * produces for one request of a sequence comes back as the matching state input on the sequence's
 * next request. A sequence starts from its `initial_state` (zeros, or bytes of
 * `<model>/initial_state/<data_file>`), or from zeros shaped by the state's dims (-1 read as 1)
 * when none is given. The scheduler holds the values (main thread, per sequence); any backend that
 * reads an input and writes an output of those names works with it.
 */
import { open } from 'node:fs/promises';
import path from 'node:path';
import { InferError } from '../../errors.ts';
import type { ModelConfig, SequenceState } from '../../config/model-config.ts';
import { configToWireDataType, DATA_TYPE_SIZE, type DataType } from '../../tensor/data-type.ts';
import { elementCount, type Tensor } from '../../tensor/tensor.ts';
import type { InferResponse, RequestedOutput } from '../../types.ts';
import { assertRealPathInside, joinInside } from '../../repository/safe-path.ts';

/** Triton's kInitialStateFolder. */
export const INITIAL_STATE_FOLDER = 'initial_state';
/** A STRING initial state is the whole file; bound what one file may put in memory per sequence. */
const MAX_STRING_INITIAL_STATE_BYTES = 64 * 1024 * 1024;

/** The starting value of one state input (shape with the batch dimension when the model batches). */
export interface InitialStateData {
  readonly shape: readonly number[];
  readonly data: Uint8Array;
}

const invalid = (message: string): InferError => new InferError('INVALID_ARG', message);

function wireType(state: Pick<SequenceState, 'data_type' | 'input_name'>): DataType {
  const t = configToWireDataType(state.data_type);
  if (!t) throw invalid(`state '${state.input_name}' has unsupported data type ${state.data_type}`);
  return t;
}

/** Reads up to `limit` bytes of `file` (never more: a huge file is not read whole). */
async function readHead(file: string, limit: number): Promise<Uint8Array> {
  const handle = await open(file, 'r');
  try {
    const size = (await handle.stat()).size;
    const buffer = new Uint8Array(Math.min(size, limit));
    let read = 0;
    while (read < buffer.byteLength) {
      const { bytesRead } = await handle.read(buffer, read, buffer.byteLength - read, read);
      if (bytesRead === 0) break;
      read += bytesRead;
    }
    return buffer.subarray(0, read);
  } finally {
    await handle.close();
  }
}

/**
 * Triton's GenerateInitialStateData for every state with an `initial_state`, with its messages.
 * `modelDir` holds `initial_state/`; a data file must stay inside the model's folder (links included).
 */
export async function loadInitialStates(config: ModelConfig, modelDir: string): Promise<Map<string, InitialStateData>> {
  const out = new Map<string, InitialStateData>();
  const batching = config.max_batch_size > 0;
  for (const state of config.sequence_batching?.state ?? []) {
    if (state.initial_state.length > 1) {
      throw invalid(`initial_state field for state input '${state.input_name}' must contain exactly one or zero element. Found '${state.initial_state.length}' elements.`);
    }
    const initial = state.initial_state[0];
    if (!initial) continue;
    if (initial.data_type !== state.data_type) {
      throw invalid(`The data type used for 'initial_state' field of state '${state.input_name}' does not match the state data type.`);
    }
    if (initial.name === '') throw invalid(`Field 'name' must be set when using initial_state for state input '${state.input_name}'.`);
    if (out.has(state.input_name)) throw invalid(`State input name '${state.input_name}' specified more than once.`);
    if (initial.dims.length !== state.dims.length) {
      throw invalid(
        `Number of dimensions in 'initial_state' doesn't match the size of 'state' dimensions for state input '${state.input_name}'. ${initial.dims.length} != ${state.dims.length}`,
      );
    }
    initial.dims.forEach((d, i) => {
      if (d === -1) throw invalid(`'initial_state' field for state input name '${state.input_name}' contains variable dimensions.`);
      const s = state.dims[i]!;
      if (s !== -1 && d !== s) throw invalid(`'initial_state' dim for input name '${state.input_name}' doesn't match 'state' dim description. ${d} != ${s}`);
    });
    const datatype = wireType(state);
    const shape = batching ? [1, ...initial.dims] : [...initial.dims];
    const count = elementCount(initial.dims);
    const total = datatype === 'BYTES' ? 4 * count : DATA_TYPE_SIZE[datatype] * count;
    let data: Uint8Array;
    if (initial.zero_data) {
      data = new Uint8Array(total); // BYTES: every element an empty string
    } else if (initial.data_file) {
      const folder = path.join(modelDir, INITIAL_STATE_FOLDER);
      const file = joinInside(folder, initial.data_file, 'initial_state data_file');
      await assertRealPathInside(modelDir, file, 'initial_state data_file');
      let bytes: Uint8Array;
      try {
        bytes = await readHead(file, datatype === 'BYTES' ? MAX_STRING_INITIAL_STATE_BYTES + 1 : total);
      } catch (err) {
        throw invalid(`unable to read initial_state data_file '${initial.data_file}' of state '${state.input_name}': ${(err as Error).message}`);
      }
      if (datatype === 'BYTES') {
        if (bytes.byteLength > MAX_STRING_INITIAL_STATE_BYTES) {
          throw invalid(`initial_state data_file '${initial.data_file}' of state '${state.input_name}' is larger than ${MAX_STRING_INITIAL_STATE_BYTES} bytes`);
        }
        data = bytes;
      } else if (bytes.byteLength < total) {
        throw invalid(`initial_state setting expects ${total} bytes, but the data provided from ${initial.data_file}only has ${bytes.byteLength} bytes.`);
      } else {
        data = bytes;
      }
    } else {
      throw invalid(`initial_state setting expects state'${state.input_name}' to have state_data set`);
    }
    out.set(state.input_name, { shape, data });
  }
  return out;
}

/** The state values of one sequence: state input name → tensor fed on its next request. */
export type SequenceStateValues = Map<string, Tensor>;

/** The implicit states of one model. */
export class ImplicitState {
  private readonly states: readonly SequenceState[];
  private readonly types: ReadonlyMap<string, DataType>;
  /** State outputs that are not config outputs: produced for the scheduler only, never returned. */
  private readonly hidden: ReadonlySet<string>;
  private readonly configOutputs: readonly string[];

  constructor(
    config: ModelConfig,
    private readonly initial: ReadonlyMap<string, InitialStateData>,
  ) {
    for (const st of config.sequence_batching?.state ?? []) {
      // Triton's SequenceStates::Initialize checks; growable memory is a GPU feature, and no instance here is one.
      if (!st.use_growable_memory) continue;
      if (!st.use_same_buffer_for_input_output) {
        throw new InferError('INVALID_ARG', `In order to 'use_growable_memory', you must also enable 'use_single_buffer' for state input name '${st.input_name}'.`);
      }
      throw new InferError(
        'INVALID_ARG',
        `'use_growable_memory' can only work with KIND_GPU model instances right now. Please either change the instance type to KIND_GPU or set 'use_growable_memory' to false for state input '${st.input_name}'.`,
      );
    }
    const seen = new Set<string>();
    // Triton ignores (with a warning) a second state with an input or output name already used.
    this.states = (config.sequence_batching?.state ?? []).filter((s) => {
      if (seen.has(`i:${s.input_name}`) || seen.has(`o:${s.output_name}`)) return false;
      seen.add(`i:${s.input_name}`).add(`o:${s.output_name}`);
      return true;
    });
    this.types = new Map(this.states.map((s) => [s.input_name, wireType(s)]));
    this.configOutputs = config.output.map((o) => o.name);
    const declared = new Set(this.configOutputs);
    this.hidden = new Set(this.states.map((s) => s.output_name).filter((n) => !declared.has(n)));
    this.batching = config.max_batch_size > 0;
  }

  private readonly batching: boolean;

  get active(): boolean {
    return this.states.length > 0;
  }

  /** The starting values of a sequence. */
  fresh(): SequenceStateValues {
    const values: SequenceStateValues = new Map();
    for (const s of this.states) {
      const datatype = this.types.get(s.input_name)!;
      const init = this.initial.get(s.input_name);
      if (init) {
        values.set(s.input_name, { name: s.input_name, datatype, shape: init.shape, data: init.data });
        continue;
      }
      const dims = s.dims.map((d) => (d === -1 ? 1 : d));
      const shape = this.batching ? [1, ...dims] : dims;
      const count = elementCount(dims);
      values.set(s.input_name, { name: s.input_name, datatype, shape, data: new Uint8Array(datatype === 'BYTES' ? 4 * count : DATA_TYPE_SIZE[datatype] * count) });
    }
    return values;
  }

  /** The state inputs of a request, from the sequence's values. */
  inputs(values: SequenceStateValues): Tensor[] {
    return this.states.map((s) => values.get(s.input_name)!);
  }

  /** What the request asks of the model: the client's outputs (all config outputs if none) plus every state output. */
  requestedOutputs(requested: readonly RequestedOutput[] | undefined): RequestedOutput[] {
    const base = requested && requested.length > 0 ? [...requested] : this.configOutputs.map((name) => ({ name }));
    const names = new Set(base.map((o) => o.name));
    for (const s of this.states) if (!names.has(s.output_name)) base.push({ name: s.output_name });
    return base;
  }

  /**
   * Takes the state outputs of `response` into `values` (the sequence's next state) and returns the
   * response the client gets: only the outputs it asked for (state outputs that are config outputs
   * included when asked for). A state output the model did not produce is an error, as in Triton.
   */
  absorb(values: SequenceStateValues, response: InferResponse, requested: readonly RequestedOutput[] | undefined): InferResponse {
    for (const s of this.states) {
      const out = response.outputs.find((o) => o.name === s.output_name);
      if (!out) throw new InferError('INTERNAL', `model '${response.model}' did not produce state output '${s.output_name}'`);
      values.set(s.input_name, { name: s.input_name, datatype: out.datatype, shape: out.shape, data: out.data });
    }
    const wanted = requested && requested.length > 0 ? new Set(requested.map((o) => o.name)) : undefined;
    const outputs = response.outputs.filter((o) => (wanted ? wanted.has(o.name) : !this.hidden.has(o.name)));
    return outputs.length === response.outputs.length ? response : { ...response, outputs };
  }
}
