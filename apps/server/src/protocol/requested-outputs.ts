/**
 * A request's requested outputs are a set of names (Triton's InferenceRequest keeps
 * `original_requested_outputs_` in a std::set, and its HTTP frontend keeps the first entry's
 * binary/shared-memory/classification parameters for a name): an output named twice is computed and
 * answered once, with the first entry's parameters. Tritium answered every repeat, so a 26 KB request
 * naming a 4 KB output 1000 times drew a 2 MB answer, and a larger output a reply the server could
 * not build.
 */
export function firstOfEachName<T extends { readonly name: string }>(outputs: readonly T[]): T[] {
  if (outputs.length < 2) return [...outputs];
  const seen = new Set<string>();
  return outputs.filter((o) => !seen.has(o.name) && (seen.add(o.name), true));
}
