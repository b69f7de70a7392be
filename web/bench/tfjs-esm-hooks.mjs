// A module resolution hook (node:module register) for tfjs-core's ES module
// files, whose relative imports carry no extension ('./kernel_names'): Node
// resolves them as './kernel_names.js' or './gradients/index.js' here, as
// bundlers do. Only specifiers inside @tensorflow/tfjs-core/dist/ are touched.
export async function resolve(specifier, context, next) {
  try {
    return await next(specifier, context);
  } catch (error) {
    const inTfjsCore = context.parentURL?.includes('/@tensorflow/tfjs-core/dist/');
    if (!specifier.startsWith('.') || !inTfjsCore) throw error;
    try {
      return await next(`${specifier}.js`, context);
    } catch {
      return next(`${specifier}/index.js`, context);
    }
  }
}
