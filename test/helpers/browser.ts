// Real Chromium for browser tests: Debian's /usr/bin/chromium driven by playwright-core,
// headless, with the flags this machine needs (no sandbox as root, no background traffic
// to a network that is closed).
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      // The dashboard previews mail in sandboxed srcdoc iframes, which this Chromium renders in a
      // process of their own; under load, playwright now and then never saw such a frame's new
      // document after its srcdoc changed (the preview tests waited 30-60 s for text that was
      // there). In-process frames render the same documents without that handover.
      '--disable-features=IsolateSandboxedIframes',
    ],
  });
}
