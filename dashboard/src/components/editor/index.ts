// What the campaign pages load with import(): the editor and the preview, in a chunk of their own.
export { ContentEditor, type Body, type EditorHandle, type Initial } from './ContentEditor';
export { Preview } from './Preview';
