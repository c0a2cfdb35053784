/** How to point each real client at this registry, with commands written for its public URL. */
import {
  COMFY_CLI_DEV_REGISTRY,
  comfyCliCaveat,
  comfyCliInstall,
  comfyCliPublish,
  managerSnippet,
  registryWebBuild,
  comfyApiBase,
} from './clients'
import { Command } from './format'
import type { Links } from './links'

export function ClientsPage({ links }: { links: Links }) {
  const url = links.publicUrl
  const caveat = comfyCliCaveat(url)
  return (
    <>
      <h1>Use this registry with your clients</h1>
      <p class="lead">
        The clients of the public node registry work here unchanged; each is pointed at a registry in its own way, some only roughly.
      </p>

      <section aria-labelledby="address-heading">
        <h2 id="address-heading">This registry's address</h2>
        <Command id="registry-url" text={url} label="registry address" />
        <p>
          Every client below talks to this address. The API is described at <a href={links.openapi()}>{url}/openapi</a>.
        </p>
      </section>

      <section aria-labelledby="cli-heading">
        <h2 id="cli-heading">comfy-cli: install and publish</h2>
        <p>
          comfy-cli has no registry setting, but with <code>ENVIRONMENT=dev</code> it uses <code>{COMFY_CLI_DEV_REGISTRY}</code> instead of
          the public registry, for every registry command.
        </p>
        {caveat && <p class="notice">{caveat}</p>}
        <p>Install a node into the ComfyUI of the current workspace (add --version X.Y.Z for another version):</p>
        <Command id="cli-install" text={comfyCliInstall('NODE_ID')} label="comfy-cli install command" />
        <p>Publish the node in the current directory with a publisher token of this registry:</p>
        <Command id="cli-publish" text={comfyCliPublish()} label="comfy-cli publish command" />
        <p class="muted">
          On Windows, set the variable first: <code>set ENVIRONMENT=dev</code> (cmd) or <code>$env:ENVIRONMENT = "dev"</code> (PowerShell).{' '}
          <code>comfy node install</code> is not a registry command of comfy-cli: it runs ComfyUI-Manager, below.
        </p>
      </section>

      <section aria-labelledby="manager-heading">
        <h2 id="manager-heading">ComfyUI-Manager</h2>
        <p>
          The Manager has no setting for its registry: its <code>cnr_utils.base_url</code> names the public registry, and it is read on
          every call, so setting it sends every registry call of the Manager here. Inside ComfyUI, a file in <code>custom_nodes/</code> can
          do it:
        </p>
        <Command id="manager-snippet" text={managerSnippet(url)} label="ComfyUI-Manager setting" />
        <p class="muted">
          <code>cm-cli</code> (and <code>comfy node install</code>, which runs it) does not load custom nodes: set the same value from a{' '}
          <code>sitecustomize.py</code> on the Python path of the environment it runs in.
        </p>
      </section>

      <section aria-labelledby="web-heading">
        <h2 id="web-heading">Registry web front end</h2>
        <p>It reads the registry's address when it is built:</p>
        <Command id="web-build" text={registryWebBuild(url)} label="registry web front end build command" />
        <p class="muted">
          Its node pages then read from here. Its sign-in and its home page search use services on the internet, so they do not work
          offline; the pages you are reading now do.
        </p>
      </section>

      <section aria-labelledby="frontend-heading">
        <h2 id="frontend-heading">ComfyUI's own front end</h2>
        <p>
          Its registry address is fixed when it is built. It installs nodes through ComfyUI-Manager, so pointing the Manager here (above) is
          what makes installs from ComfyUI use this registry.
        </p>
      </section>

      <section aria-labelledby="video-heading">
        <h2 id="video-heading">ComfyUI's video node (API nodes)</h2>
        <p>
          ComfyUI's API nodes take the address of their API from a start option. The video node then stages its two frames and starts its
          task here, and this registry forwards the task to the video provider its operator configured:
        </p>
        <Command id="video-base" text={comfyApiBase(url)} label="ComfyUI start option for API nodes" />
        <p class="muted">
          The node sends its key as <code>X-API-KEY</code>: use an access token of this registry there, unless the operator opened the proxy
          to everyone (<code>--video-public</code>). Without a configured provider the proxy answers 503.
        </p>
      </section>

      <section aria-labelledby="http-heading">
        <h2 id="http-heading">Anything that speaks HTTP</h2>
        <p>The version to install, with its download address (this counts a download, as the Manager's installs do):</p>
        <Command id="http-install" text={`curl -s ${url}/nodes/NODE_ID/install`} label="install lookup with curl" />
      </section>
    </>
  )
}
