// The forms' stylesheet, inside each form's shadow root so the page's CSS and ours never mix.
// definition.styles arrive as custom properties (see shell.ts); the defaults meet WCAG AA
// contrast, show focus clearly and give controls a 44 px target.
import type { Styles } from '../definition.ts';

export const CSS = `
:host{all:initial}
.r{font-family:var(--f,system-ui,-apple-system,"Segoe UI",Roboto,sans-serif);font-size:var(--s,16px);line-height:1.5;color:var(--fg,#1f2937)}
.o{position:fixed;inset:0;background:var(--ov,rgba(17,24,39,.6));z-index:2147483646}
.p{position:fixed;z-index:2147483647;box-sizing:border-box;max-height:100vh;overflow:auto;padding:24px;background:var(--bg,#fff);color:var(--fg,#1f2937);border-radius:var(--rad,12px);box-shadow:0 10px 40px rgba(0,0,0,.3)}
.popup .p{top:50%;left:50%;transform:translate(-50%,-50%);width:min(var(--w,440px),calc(100vw - 32px))}
.full_page .p{inset:0;border-radius:0;display:flex;align-items:center;justify-content:center}
.full_page .b{width:min(var(--w,560px),100%)}
.flyout .p{bottom:16px;right:16px;width:min(var(--w,380px),calc(100vw - 32px))}
.flyout.bottom_left .p,.flyout.top_left .p{right:auto;left:16px}
.flyout.top_right .p,.flyout.top_left .p{bottom:auto;top:16px}
.banner .p{left:0;right:0;top:0;border-radius:0;padding:12px 56px 12px 16px}
.banner.bottom .p{top:auto;bottom:0}
.banner form{display:flex;flex-wrap:wrap;gap:0 16px;align-items:flex-end}
.banner h2{font-size:1.15em;margin:0 0 8px}
.embed .p{position:static;box-shadow:none;width:100%;max-width:var(--w,none);max-height:none;z-index:auto}
h2{font-size:1.4em;line-height:1.25;margin:0 0 12px}
p{margin:0 0 12px}
.fl{margin:0 0 12px;padding:0;border:0;min-width:0}
label,legend{display:block;font-weight:600;margin:0 0 4px;padding:0}
.ch{display:flex;gap:8px;align-items:center;font-weight:400}
.fl.ch label{margin:0}
input,select{font:inherit}
input[type=text],input[type=email],input[type=tel],input[type=date],select{box-sizing:border-box;width:100%;min-height:44px;padding:8px 12px;border:1px solid #6b7280;border-radius:6px;color:#111827;background:#fff}
input::placeholder{color:#6b7280}
input[type=checkbox],input[type=radio]{width:20px;height:20px;margin:0;flex:none}
[aria-invalid=true]{border-color:#b91c1c;border-width:2px}
.e{color:#b91c1c;background:#fff;font-size:.9em;margin:4px 0 0;padding:0 2px}
.btn{display:inline-block;box-sizing:border-box;min-height:44px;padding:10px 20px;margin:4px 8px 4px 0;border:0;border-radius:6px;background:var(--btn,#1d4ed8);color:var(--btnfg,#fff);font:inherit;font-weight:600;text-decoration:none;cursor:pointer}
.x{position:absolute;top:8px;right:8px;width:40px;height:40px;border:0;border-radius:6px;background:transparent;color:inherit;font:inherit;font-size:26px;line-height:1;cursor:pointer}
:focus-visible{outline:3px solid #2563eb;outline-offset:2px}
.ok:focus{outline:none}
img{display:block;max-width:100%;height:auto;margin:0 0 12px}
.hp{position:absolute;left:-10000px;top:auto;width:1px;height:1px;overflow:hidden}
.sr{position:absolute;width:1px;height:1px;margin:-1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
[hidden]{display:none!important}
`;

const PROPERTIES: Array<[keyof Styles, string, string]> = [
  ['background_color', '--bg', ''],
  ['text_color', '--fg', ''],
  ['button_color', '--btn', ''],
  ['button_text_color', '--btnfg', ''],
  ['overlay_color', '--ov', ''],
  ['font_family', '--f', ''],
  ['font_size', '--s', 'px'],
  ['border_radius', '--rad', 'px'],
  ['width', '--w', 'px'],
];

/** Sets definition.styles as custom properties (values checked at publish; CSSOM never parses them as rules). */
export function applyStyles(root: HTMLElement, styles: Styles | undefined): void {
  for (const [name, property, unit] of PROPERTIES) {
    const value = styles?.[name];
    if (value !== undefined) root.style.setProperty(property, `${value}${unit}`);
  }
}
