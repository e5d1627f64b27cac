/** The sequence options of an inference call (tritonclient's `sequence_id`, `sequence_start`, `sequence_end`). */
export interface SequenceOptions {
  /** A non-zero integer or a non-empty string names the sequence; 0 / '' = none. */
  sequenceId?: number | bigint | string;
  /** First request of the sequence (`sequence_start`). */
  sequenceStart?: boolean;
  /** Last request of the sequence (`sequence_end`). */
  sequenceEnd?: boolean;
}

/** tritonclient's rule: the sequence keys are sent only with a non-zero, non-empty `sequence_id`. */
export function sequenceParameters(options: SequenceOptions): Record<string, number | bigint | string | boolean> {
  const id = options.sequenceId;
  if (id === undefined || id === 0 || id === 0n || id === '') return {};
  return { sequence_id: id, sequence_start: options.sequenceStart === true, sequence_end: options.sequenceEnd === true };
}

