// Registers TF.js's gradient functions, which tfjs-core's Node bundle leaves
// out (the @tensorflow/tfjs package imports them; tf.grads needs them). They
// exist only as ES module files with extensionless imports, hence the hook.
// They register into tfjs-core's global registry, shared with the Node bundle.
import { register } from 'node:module';

register(new URL('./tfjs-esm-hooks.mjs', import.meta.url));
await import('@tensorflow/tfjs-core/dist/register_all_gradients.js');
