/**
 * How each real client is pointed at a registry, as commands for this one. The clients' own settings decide
 * what is possible: comfy-cli knows one other registry (ENVIRONMENT=dev means http://localhost:8080),
 * ComfyUI-Manager has no setting at all, the registry web front end takes its API address when it is built.
 */

/** The one registry besides the public one that comfy-cli can use. */
export const COMFY_CLI_DEV_REGISTRY = 'http://localhost:8080'

/** Whether comfy-cli with ENVIRONMENT=dev reaches this registry as it is published. */
export function comfyCliReaches(publicUrl: string): boolean {
  const url = new URL(publicUrl)
  const local = url.hostname === 'localhost' || url.hostname === '127.0.0.1'
  return url.protocol === 'http:' && local && url.port === '8080' && (url.pathname === '/' || url.pathname === '')
}

/** Node ids, versions and most URLs are shell-safe as they are; anything else is quoted. */
const shellWord = (word: string) => (/^[\w.+\-:/@%=,]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`)

export const comfyCliInstall = (nodeId: string, version?: string) =>
  `ENVIRONMENT=dev comfy node registry-install ${shellWord(nodeId)}${version ? ` --version ${shellWord(version)}` : ''}`

export const comfyCliPublish = () => 'ENVIRONMENT=dev comfy node publish --token "$PUBLISHER_TOKEN"'

/** What to add beside a comfy-cli command when this registry is published anywhere but comfy-cli's one address. */
export function comfyCliCaveat(publicUrl: string): string | undefined {
  if (comfyCliReaches(publicUrl)) return undefined
  return (
    `This registry is at ${publicUrl}: run comfy-cli where ${COMFY_CLI_DEV_REGISTRY} leads here ` +
    `(on a machine where registry-mirror listens on port 8080, or through a forwarded port).`
  )
}

/** A file for custom_nodes/ that points ComfyUI-Manager, in either of its layouts, at this registry. */
export function managerSnippet(publicUrl: string): string {
  return [
    '# custom_nodes/use_registry_mirror.py: ComfyUI runs it while loading custom nodes.',
    'import os, sys',
    '',
    'try:',
    '    from comfyui_manager.common import cnr_utils  # ComfyUI-Manager installed as a package',
    'except ImportError:',
    '    sys.path.append(os.path.join(os.path.dirname(__file__), "ComfyUI-Manager", "glob"))',
    '    import cnr_utils  # ComfyUI-Manager in custom_nodes/ComfyUI-Manager',
    '',
    `cnr_utils.base_url = ${JSON.stringify(publicUrl)}`,
  ].join('\n')
}

export const registryWebBuild = (publicUrl: string) => `NEXT_PUBLIC_BACKEND_URL=${shellWord(publicUrl)} npm run build`

/** ComfyUI's API nodes (the video node among them) call `--comfy-api-base` for the proxy and image staging. */
export const comfyApiBase = (publicUrl: string) => `python main.py --comfy-api-base ${shellWord(publicUrl)}`
