/**
 * Thrown for every invalid argument (the message names the argument, what was
 * expected and what was given) and when a request needs more memory than
 * WebAssembly can provide. The engine stays usable after it.
 */
export class AttnScopeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AttnScopeError';
  }
}
