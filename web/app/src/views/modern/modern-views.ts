// The "Modern attention" part of the page: one view per variant, in tab order after
// the classic views (views/registry.ts adds them). Their look: styles/modern.css.
import '../../styles/modern.css';
import type { ViewDef } from '../types';
import { DecodeView } from './decode-view';
import { FlashView } from './flash-view';
import { GqaView } from './gqa-view';
import { RopeView } from './rope-view';
import { WindowView } from './window-view';

export const kModernViews: ViewDef[] = [
  { id: 'rope', label: 'RoPE', Component: RopeView },
  { id: 'gqa', label: 'GQA/MQA', Component: GqaView },
  { id: 'window', label: 'Window · ALiBi', Component: WindowView },
  { id: 'kv-cache', label: 'KV cache', Component: DecodeView },
  { id: 'flash', label: 'Flash', Component: FlashView },
];
