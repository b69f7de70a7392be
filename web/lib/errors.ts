/**
 * Thrown for every invalid argument (the message names the argument, what was
 * expected and what was given) and when a request needs more memory than
 * WebAssembly can provide. The engine stays usable after it.
 */
export class AttnScopeError extends Error {
  constructor(
    message: string,
    options?: {
      /** The exception this one reports (a JavaScript error met on the way). */
      cause?: unknown;
    },
  ) {
    super(message, options);
    this.name = 'AttnScopeError';
  }
}

/**
 * `error` as an AttnScopeError: itself when it is one, else one whose message
 * says where it happened and what was thrown (kept as `cause`).
 */
export function toAttnScopeError(fn: string, error: unknown): AttnScopeError {
  if (error instanceof AttnScopeError) return error;
  let what: string;
  try {
    what = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  } catch {
    what = typeof error;
  }
  return new AttnScopeError(`${fn}: ${what}`, { cause: error });
}
