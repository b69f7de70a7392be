// The worker_threads worker started by createAttnScopeWorker (Node flavour).
import { parentPort } from 'node:worker_threads';

import { createAttnScope } from './node.js';
import { serve } from './worker-protocol.js';

const port = parentPort;
if (!port) throw new Error('worker-node-main.js must run in a worker thread');
serve(
  {
    post: (message, transfer) => port.postMessage(message, transfer),
    listen: (onMessage) => port.on('message', onMessage),
  },
  createAttnScope,
);
