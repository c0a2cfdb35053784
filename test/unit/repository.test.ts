import { describe, expect, test } from 'bun:test'
import { parseRepository, repoWebBase } from '../../src/domain/repository'

describe('repoWebBase', () => {
  test('GitHub, GitHub Enterprise, Gitea and Forgejo API addresses give where their repositories live', () => {
    expect(repoWebBase('https://api.github.com')).toBe('github.com')
    expect(repoWebBase('https://GHE.example.com/api/v3/')).toBe('ghe.example.com')
    expect(repoWebBase('https://gitea.example.com/api/v1')).toBe('gitea.example.com')
    expect(repoWebBase('https://example.com/forgejo/api/v1')).toBe('example.com/forgejo')
    expect(repoWebBase('http://127.0.0.1:8123')).toBe('127.0.0.1:8123')
  })
})

describe('parseRepository', () => {
  const on = (url: string, base = 'github.com') => parseRepository(url, base)

  test('scheme, www., .git, trailing slashes, query, case of the host and SSH forms are handled; the names keep their case', () => {
    for (const url of [
      'https://github.com/Octo/Repo',
      'http://github.com/Octo/Repo/',
      'https://www.GitHub.com/Octo/Repo.git',
      'github.com/Octo/Repo.git/',
      'git@github.com:Octo/Repo.git',
      'ssh://git@github.com/Octo/Repo',
      'https://github.com/Octo/Repo?tab=readme#top',
      'https://github.com/Octo/Repo/tree/main/nodes',
      '  https://github.com/Octo/Repo  ',
    ]) {
      expect(on(url)).toEqual({ owner: 'Octo', repo: 'Repo' })
    }
  })

  test('a URL that names no repository on that host gives nothing', () => {
    for (const url of [
      '',
      'https://gitlab.com/octo/repo',
      'https://github.com.evil.example/octo/repo',
      'https://evilgithub.com/octo/repo',
      'https://github.com/octo',
      'https://github.com/',
      'https://github.com/../repo',
      'https://github.com/octo/..',
      'https://github.com/oc%2Fto/repo',
      'not a url at all',
    ]) {
      expect(on(url)).toBeUndefined()
    }
  })

  test('hosts with a port or a path prefix', () => {
    expect(on('http://127.0.0.1:8123/octo/repo', '127.0.0.1:8123')).toEqual({ owner: 'octo', repo: 'repo' })
    expect(on('http://127.0.0.1:9999/octo/repo', '127.0.0.1:8123')).toBeUndefined()
    expect(on('https://example.com/forgejo/octo/repo.git', 'example.com/forgejo')).toEqual({ owner: 'octo', repo: 'repo' })
    expect(on('https://example.com/octo/repo', 'example.com/forgejo')).toBeUndefined()
  })
})
