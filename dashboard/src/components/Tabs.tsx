// A tab strip and its panel, as the ARIA tabs pattern wants them: one tab in the Tab order,
// Left and Right move between tabs (wrapping round) and take the focus along.
import type { ComponentChildren } from 'preact';

export interface TabsProps<K extends string> {
  /** The strip's accessible name. */
  label: string;
  /** Each tab's key (its element id is `tab-<key>`) and the words on it. */
  tabs: ReadonlyArray<readonly [K, string]>;
  selected: K;
  /** Called on a click and on an arrow key. */
  onSelect: (key: K) => void;
  /** The panel's element id. */
  panelId: string;
  /** Inline style of the strip (a page with facts above it spaces it from them). */
  style?: string;
  children: ComponentChildren;
}

export function Tabs<K extends string>({ label, tabs, selected, onSelect, panelId, style, children }: TabsProps<K>) {
  const move = (delta: number) => {
    const index = (tabs.findIndex(([key]) => key === selected) + delta + tabs.length) % tabs.length;
    const next = tabs[index][0];
    onSelect(next);
    document.getElementById(`tab-${next}`)?.focus();
  };
  return (
    <>
      <div role="tablist" aria-label={label} class="tabs" style={style}>
        {tabs.map(([key, text]) => (
          <button
            type="button"
            role="tab"
            id={`tab-${key}`}
            aria-selected={selected === key}
            aria-controls={panelId}
            tabIndex={selected === key ? 0 : -1}
            onClick={() => onSelect(key)}
            onKeyDown={(e) => {
              if (e.key === 'ArrowRight') move(1);
              if (e.key === 'ArrowLeft') move(-1);
            }}
          >
            {text}
          </button>
        ))}
      </div>
      <div class="tab-panel" role="tabpanel" id={panelId} aria-labelledby={`tab-${selected}`}>
        {children}
      </div>
    </>
  );
}
