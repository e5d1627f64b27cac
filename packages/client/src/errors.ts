/** The error every client call rejects with (like tritonclient's InferenceServerException). */
export class InferenceServerException extends Error {
  constructor(
    message: string,
    /** HTTP status (e.g. "400") or gRPC status name (e.g. "StatusCode.INVALID_ARGUMENT"). */
    readonly status?: string,
    readonly debugDetails?: unknown,
  ) {
    super(message);
    this.name = 'InferenceServerException';
  }
}
