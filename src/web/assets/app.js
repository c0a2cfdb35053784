// The pages' only script: results as you type, and copy buttons. Every page works without it.
;(() => {
  const form = document.querySelector('form[data-results]')
  const region = document.getElementById('results')
  const status = document.getElementById('results-status')
  if (form && region) {
    let timer
    let inFlight
    let failed
    // The status is announced, and shown too when the search failed.
    const say = (text, shown) => {
      failed = shown
      if (status) status.textContent = text
      if (status) status.className = shown ? 'notice' : 'sr-only'
    }
    const search = () => {
      const params = new URLSearchParams()
      for (const [key, value] of new FormData(form)) if (typeof value === 'string' && value.trim()) params.append(key, value.trim())
      const query = params.toString() ? `?${params}` : ''
      inFlight?.abort()
      inFlight = new AbortController()
      region.setAttribute('aria-busy', 'true')
      fetch(form.dataset.results + query, { signal: inFlight.signal })
        .then(async (res) => {
          // A 400 (a filter too long, say) comes as a fragment that says why; anything else is a failure.
          if (!res.ok && res.status !== 400) throw new Error(`status ${res.status}`)
          // Focus in the old results (a Tab as they arrive) stays at its place in the new ones, not the page's start.
          const links = () => [...region.querySelectorAll('a')]
          const at = links().indexOf(document.activeElement)
          region.innerHTML = await res.text()
          if (at >= 0) (links()[at] ?? region).focus()
          const summary = region.querySelector('[data-summary]')
          say(summary ? summary.textContent : '')
          const title = region.querySelector('[data-title]')?.dataset.title
          if (title) document.title = title
          history.replaceState(null, '', form.action.split('?')[0] + query)
        })
        .catch((err) => {
          if (err.name === 'AbortError') return
          say('Search failed; press Search to load the page instead.', true)
        })
        .finally(() => region.removeAttribute('aria-busy'))
    }
    form.addEventListener('input', () => {
      clearTimeout(timer)
      timer = setTimeout(search, 150)
    })
    form.addEventListener('submit', (event) => {
      if (failed) return // loads the page, as the failure said
      event.preventDefault()
      clearTimeout(timer)
      search()
    })
  }

  // Copy buttons name the element whose text they copy; the clipboard API needs a secure context, so plain
  // http on another host falls back to selecting the text and the older copy command.
  for (const button of document.querySelectorAll('button[data-copy]')) {
    button.hidden = false
    button.addEventListener('click', async () => {
      const source = document.getElementById(button.dataset.copy)
      if (!source) return
      const text = source.textContent
      let copied = false
      try {
        await navigator.clipboard.writeText(text)
        copied = true
      } catch {
        const range = document.createRange()
        range.selectNodeContents(source)
        getSelection().removeAllRanges()
        getSelection().addRange(range)
        copied = document.execCommand('copy')
      }
      const note = document.getElementById(`${button.dataset.copy}-status`)
      if (!note) return
      // A live region announces a change only: emptied first, a second press is announced again.
      note.textContent = ''
      setTimeout(() => (note.textContent = copied ? 'Copied.' : 'Selected: press Ctrl+C to copy.'), 100)
    })
  }
})()
