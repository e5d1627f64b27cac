/** Limits the transports enforce before anything reaches the server (flags set them). */
export interface TransportLimits {
  /** Largest request body, compressed or decompressed (`--http-max-input-size`, 64 MB). */
  readonly maxInputBytes: number;
  /** Largest element count of one tensor. */
  readonly maxTensorElements: number;
  /** Most HTTP headers per request. */
  readonly maxHeaderCount: number;
}

export const DEFAULT_LIMITS: TransportLimits = {
  maxInputBytes: 64 * 1024 * 1024,
  maxTensorElements: 1 << 28,
  maxHeaderCount: 100,
};
