/**
 * Triton's ModelIdentifier: a model is its name within a namespace. With `--model-namespacing`
 * the namespace is the repository (as given on the command line), so several repositories may
 * hold models of the same name; without it every namespace is '' and a name is unique.
 */

/** The key a model is held under: its name alone without namespacing. */
export function modelKey(namespace: string, name: string): string {
  return namespace === '' ? name : `${namespace}\0${name}`;
}

/** Triton's printed form of an identifier: `namespace::name`, or the name alone. */
export function modelIdText(namespace: string, name: string): string {
  return namespace === '' ? name : `${namespace}::${name}`;
}

/** Triton's refusal of a name held in several namespaces (ModelRepositoryManager::FindModelIdentifier). */
export function ambiguousModelMessage(name: string, count: number): string {
  return `There are ${count} identifiers of model '${name}' in global map, model namespace must be provided to resolve ambiguity.`;
}
