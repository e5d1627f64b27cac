/**
 * Which models the OpenAI routes serve, and how OpenAI's requests map onto their tensors: declared
 * in the model's own config with Tritium parameters (Triton's parser accepts and ignores them), so
 * the same model answers KServe v2 and OpenAI clients. A model without `tritium.openai` is not
 * served on the OpenAI routes.
 *
 *     parameters { key: "tritium.openai" value: { string_value: "embeddings" } }   # or "chat,completions"
 *
 * Every other key has a default (apps/server/README.md lists them): an embeddings model reads its
 * text from `TEXT` and answers `EMBEDDING`, its token count from `ATTENTION_MASK` when it has that
 * output; a text model takes `text_input` and answers `text_output` (Triton's LLM convention).
 */
import { type DataType, type ModelConfig, type ModelInput, type ModelOutput } from '@tritium/core';
import { configToWireDataType } from '@tritium/core/tensor';
import { badMapping } from './errors.ts';

export const OPENAI_PARAMETER = 'tritium.openai';
const KEY = (name: string): string => `${OPENAI_PARAMETER}.${name}`;

/** The OpenAI APIs a model may serve. */
export type OpenAiApi = 'embeddings' | 'chat' | 'completions';
const APIS: readonly OpenAiApi[] = ['embeddings', 'chat', 'completions'];

/** OpenAI's own limit on one embedding input (8192 tokens for every embedding model). */
export const DEFAULT_MAX_INPUT_TOKENS = 8192;

export interface TensorRef {
  readonly name: string;
  readonly datatype: DataType;
  /** The config's dims (without the batch dimension). */
  readonly dims: readonly number[];
}

export interface EmbeddingsMapping {
  readonly textInput: TensorRef;
  readonly embeddingOutput: TensorRef;
  /** An output whose row sums to the row's token count (an attention mask, or a count). */
  readonly tokensOutput?: TensorRef;
  /** The model token-id inputs go to (without a tokenizer), when the config names one. */
  readonly tokenIdsModel?: string;
  readonly tokenIdsInput: string;
  readonly tokenMaskInput: string;
  /** `dimensions` below the model's size is served by truncating and renormalizing (Matryoshka models). */
  readonly truncate: boolean;
  /** The most tokens one token-id input may have. */
  readonly maxInputTokens: number;
}

export interface GenerationMapping {
  readonly textInput?: TensorRef;
  /** Chat messages as JSON, when the model takes them (it then applies its own template). */
  readonly messagesInput?: TensorRef;
  readonly textOutput: TensorRef;
  /** Optional request inputs the model declares, by Triton's TRT-LLM names. */
  readonly controls: ReadonlyMap<GenerationControl, TensorRef>;
  readonly inputTokensOutput?: TensorRef;
  readonly outputTokensOutput?: TensorRef;
}

/** Request fields passed to a generating model that declares an input of this name (Triton's names). */
export const GENERATION_CONTROLS = ['stream', 'max_tokens', 'temperature', 'top_p', 'seed'] as const;
export type GenerationControl = (typeof GENERATION_CONTROLS)[number];

export interface OpenAiMapping {
  readonly model: string;
  readonly apis: ReadonlySet<OpenAiApi>;
  /** The model's max_batch_size: 0 means requests carry no batch dimension. */
  readonly maxBatchSize: number;
  readonly embeddings?: EmbeddingsMapping;
  readonly generation?: GenerationMapping;
}

const cache = new WeakMap<ModelConfig, OpenAiMapping | null>();

/**
 * The model's OpenAI mapping, or undefined when its config declares none. Read once per config
 * object (a reload gives a new one). A mapping that names a tensor the model lacks, or of the wrong
 * type, throws a server error naming the parameter.
 */
export function openAiMappingOf(config: ModelConfig): OpenAiMapping | undefined {
  let mapping = cache.get(config);
  if (mapping === undefined) {
    mapping = readMapping(config) ?? null;
    cache.set(config, mapping);
  }
  return mapping ?? undefined;
}

function param(config: ModelConfig, key: string): string | undefined {
  const value = config.parameters?.[key]?.string_value;
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function readMapping(config: ModelConfig): OpenAiMapping | undefined {
  const declared = param(config, OPENAI_PARAMETER);
  if (declared === undefined) return undefined;
  const apis = new Set<OpenAiApi>();
  for (const name of declared.split(',').map((s) => s.trim())) {
    if (!(APIS as readonly string[]).includes(name)) {
      throw badMapping(config.name, `${OPENAI_PARAMETER} '${declared}' names '${name}' (expected embeddings, chat or completions, comma-separated)`);
    }
    apis.add(name as OpenAiApi);
  }
  const maxBatchSize = Number(config.max_batch_size);
  return {
    model: config.name,
    apis,
    maxBatchSize,
    ...(apis.has('embeddings') ? { embeddings: embeddingsMapping(config) } : {}),
    ...(apis.has('chat') || apis.has('completions') ? { generation: generationMapping(config) } : {}),
  };
}

function embeddingsMapping(config: ModelConfig): EmbeddingsMapping {
  const textInput = input(config, 'text_input', 'TEXT', true, ['BYTES']);
  const embeddingOutput = output(config, 'embedding_output', 'EMBEDDING', true, ['FP32', 'FP64']);
  const tokensOutput = output(config, 'tokens_output', 'ATTENTION_MASK', false, INTEGER_TYPES);
  const maxText = param(config, KEY('max_input_tokens'));
  const maxInputTokens = maxText === undefined ? DEFAULT_MAX_INPUT_TOKENS : Number(maxText);
  if (!Number.isSafeInteger(maxInputTokens) || maxInputTokens < 1) {
    throw badMapping(config.name, `${KEY('max_input_tokens')} '${maxText}' is not a positive integer`);
  }
  const dimensions = param(config, KEY('dimensions')) ?? 'fixed';
  if (dimensions !== 'fixed' && dimensions !== 'truncate') {
    throw badMapping(config.name, `${KEY('dimensions')} '${dimensions}' (expected fixed or truncate)`);
  }
  const tokenIdsModel = param(config, KEY('token_ids_model'));
  return {
    textInput: textInput!,
    embeddingOutput: embeddingOutput!,
    ...(tokensOutput ? { tokensOutput } : {}),
    ...(tokenIdsModel ? { tokenIdsModel } : {}),
    tokenIdsInput: param(config, KEY('token_ids_input')) ?? 'INPUT_IDS',
    tokenMaskInput: param(config, KEY('token_mask_input')) ?? 'ATTENTION_MASK',
    truncate: dimensions === 'truncate',
    maxInputTokens,
  };
}

function generationMapping(config: ModelConfig): GenerationMapping {
  const textInput = input(config, 'text_input', 'text_input', false, ['BYTES']);
  const messagesInput = input(config, 'messages_input', 'messages', false, ['BYTES']);
  if (!textInput && !messagesInput) {
    throw badMapping(config.name, `it has neither a text input ('${param(config, KEY('text_input')) ?? 'text_input'}', ${KEY('text_input')}) nor a messages input ('${param(config, KEY('messages_input')) ?? 'messages'}', ${KEY('messages_input')})`);
  }
  const controls = new Map<GenerationControl, TensorRef>();
  for (const name of GENERATION_CONTROLS) {
    const found = config.input.find((i) => i.name === name);
    const ref = found && refOf(found);
    if (ref) controls.set(name, ref);
  }
  return {
    ...(textInput ? { textInput } : {}),
    ...(messagesInput ? { messagesInput } : {}),
    textOutput: output(config, 'text_output', 'text_output', true, ['BYTES'])!,
    controls,
    ...optionalOutput(config, 'num_input_tokens', 'inputTokensOutput'),
    ...optionalOutput(config, 'num_output_tokens', 'outputTokensOutput'),
  };
}

const INTEGER_TYPES: readonly DataType[] = ['INT8', 'INT16', 'INT32', 'INT64', 'UINT8', 'UINT16', 'UINT32', 'UINT64'];

/** The tensor's name, wire datatype and dims; undefined for a type without a wire form (TYPE_INVALID). */
function refOf(tensor: ModelInput | ModelOutput): TensorRef | undefined {
  const datatype = configToWireDataType(tensor.data_type);
  return datatype ? { name: tensor.name, datatype, dims: tensor.dims } : undefined;
}

/** Triton's usage outputs of a generating model, when it has them (integers). */
function optionalOutput(config: ModelConfig, name: string, field: 'inputTokensOutput' | 'outputTokensOutput'): Partial<GenerationMapping> {
  const found = config.output.find((o) => o.name === name);
  const ref = found && refOf(found);
  return ref && INTEGER_TYPES.includes(ref.datatype) ? { [field]: ref } : {};
}

/**
 * The tensor a key names (or its default): required ones must exist; a default that the model
 * lacks is simply absent, but a name given explicitly must exist. The type must be one of `types`.
 */
function tensorOf(
  config: ModelConfig,
  kind: 'input' | 'output',
  key: string,
  fallback: string,
  required: boolean,
  types: readonly DataType[],
): TensorRef | undefined {
  const given = param(config, KEY(key));
  const name = given ?? fallback;
  const list: readonly (ModelInput | ModelOutput)[] = kind === 'input' ? config.input : config.output;
  const found = list.find((t) => t.name === name);
  if (!found) {
    if (!required && given === undefined) return undefined;
    const names = list.map((t) => t.name).join(', ');
    throw badMapping(config.name, `${KEY(key)} is '${name}'${given === undefined ? ' (the default)' : ''}, which is not one of its ${kind}s (${names})`);
  }
  const ref = refOf(found);
  if (!ref || !types.includes(ref.datatype)) {
    throw badMapping(config.name, `${kind} '${name}' (${KEY(key)}) is ${found.data_type}; expected ${types.join(' or ')}`);
  }
  return ref;
}

const input = (c: ModelConfig, key: string, fallback: string, required: boolean, types: readonly DataType[]) => tensorOf(c, 'input', key, fallback, required, types);
const output = (c: ModelConfig, key: string, fallback: string, required: boolean, types: readonly DataType[]) => tensorOf(c, 'output', key, fallback, required, types);
