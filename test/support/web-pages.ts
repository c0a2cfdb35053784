/** What the tests of the web pages share: a seeded registry of three nodes, hostile text, and reading pages. */
import { makeZip } from './archives'
import { aliceWithPublisher, publishActive, type TestApp } from './app'

export const HOSTILE = '<script>alert(1)</script><img src=x onerror=alert(2)>'
export const escaped = '&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;'

/** A page of `t`'s app: status, headers and HTML. */
export async function pageOf(t: TestApp, path: string, init?: RequestInit) {
  const res = await t.app.request(path, init)
  return { status: res.status, headers: res.headers, html: await res.text() }
}

/** Every address a page points at: links, assets, form actions. */
export const addresses = (html: string) => [...html.matchAll(/\s(?:href|src|action|data-results)="([^"]*)"/g)].map((m) => m[1]!)

export const pack = (classes: string[]) =>
  makeZip([{ name: '__init__.py', data: `NODE_CLASS_MAPPINGS = {${classes.map((c) => `${JSON.stringify(c)}: 1`).join(', ')}}` }])

/** Three nodes of publisher acme: blur-pack (two versions), upscale-kit (Windows, CUDA) and linux-tools (Linux). */
export async function seedPages(target: TestApp) {
  const { pat } = await aliceWithPublisher(target)
  const blur = {
    name: 'Blur Pack',
    description: 'Blurs images.',
    repository: 'https://github.com/acme/blur-pack',
    license: '{"text": "MIT"}',
  }
  await publishActive(target, {
    pat,
    node: 'blur-pack',
    version: '1.0.0',
    nodeFields: blur,
    versionFields: { changelog: 'First.' },
    bytes: pack(['ImageBlur']),
  })
  await publishActive(target, {
    pat,
    node: 'blur-pack',
    version: '1.1.0',
    nodeFields: blur,
    versionFields: { changelog: 'Motion blur.' },
    bytes: pack(['ImageBlur', 'MotionBlur']),
  })
  await publishActive(target, {
    pat,
    node: 'upscale-kit',
    version: '2.0.0',
    nodeFields: { name: 'Upscale Kit', supported_os: ['Microsoft :: Windows'], supported_accelerators: ['GPU :: NVIDIA CUDA'] },
    bytes: pack(['UpscaleImage']),
  })
  await publishActive(target, {
    pat,
    node: 'linux-tools',
    version: '0.3.0',
    nodeFields: { name: 'Linux Tools', supported_os: ['POSIX :: Linux'], repository: 'https://gitlab.example/tools/linux-tools.git' },
    bytes: pack(['ShellNode']),
  })
  return pat
}

export const PAGES = ['/', '/?search=blur', '/-/results?search=blur', '/-/nodes/blur-pack', '/-/publishers/acme', '/-/clients']
