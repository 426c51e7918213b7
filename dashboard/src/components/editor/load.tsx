// The editor's code comes in a chunk of its own, loaded with import() by the pages that edit
// content (campaigns, templates); this small file is what they import statically.
import { useEffect, useRef, useState } from 'preact/hooks';
import { Loading } from '../ui';
import type { Body, EditorHandle, Initial } from './index';
import './editor.css';

type EditorModule = typeof import('./index');

let loading: Promise<EditorModule> | null = null;
const loadEditor = () => (loading ??= import('./index'));

/** The editor module, once its chunk has loaded (null until then). */
export function useEditorModule(): EditorModule | null {
  const [mod, setMod] = useState<EditorModule | null>(null);
  useEffect(() => {
    let live = true;
    loadEditor().then((m) => live && setMod(m));
    return () => {
      live = false;
    };
  }, []);
  return mod;
}

/** The content editor for a form: `render` places it, `collect` gives the body to save. */
export function useEditor() {
  const mod = useEditorModule();
  const handle = useRef<EditorHandle>(null);
  return {
    render: (props: { initial: Initial | null; subject: string; previewText?: string; template?: boolean }) =>
      mod ? <mod.ContentEditor {...props} handle={handle} /> : <Loading label="Loading the editor…" />,
    collect: async (): Promise<Body> => {
      if (!handle.current) throw new Error('The editor is still loading.');
      return handle.current.collect();
    },
  };
}
