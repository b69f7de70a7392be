// Places a DOM subtree built with dom.ts (text through textContent only) inside a
// component: the derivations of the inspector and the walkthrough are built so.
import { useLayoutEffect, useRef } from 'preact/hooks';

export function Mount({ node, class: cls }: { node: Node | null; class?: string }) {
  const ref = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    ref.current!.replaceChildren(...(node ? [node] : []));
  }, [node]);
  return <div ref={ref} class={cls} />;
}
