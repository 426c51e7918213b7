// uPlot's stylesheet, imported as text (esbuild's `with { type: 'text' }`) and added on first draw.
declare module 'uplot/dist/uPlot.min.css' {
  const css: string;
  export default css;
}
