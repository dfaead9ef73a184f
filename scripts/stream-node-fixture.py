#!/usr/bin/env python3
"""Write storage/testdata/stream_nodes.txt: stream node listpacks as a real
redis-server 7.0.15 stores them, for storage's t_stream unit tests.

    redis-server --port 7391 --save '' &      # any free port
    scripts/stream-node-fixture.py 7391 > storage/testdata/stream_nodes.txt

Each scenario runs commands on a fresh key `s`, then DUMPs it with
rdbcompression off and prints every node as `node <master-key hex>
<listpack hex>` (RDB_TYPE_STREAM_LISTPACKS_2 writes them verbatim), and the
stream's `radix-tree-nodes` and MEMORY USAGE. Only XADD with explicit IDs,
XDEL and XTRIM are used, so the tests can replay them without a server.
"""
import sys
import redis

r = redis.Redis(port=int(sys.argv[1]))
r.config_set('rdbcompression', 'no')


def rdb_len(b, i):
    t = b[i] >> 6
    if t == 0:
        return b[i] & 63, i + 1
    if t == 1:
        return ((b[i] & 63) << 8) | b[i + 1], i + 2
    if b[i] == 0x80:
        return int.from_bytes(b[i + 1:i + 5], 'big'), i + 5
    assert b[i] == 0x81, 'encoded string (rdbcompression must be off)'
    return int.from_bytes(b[i + 1:i + 9], 'big'), i + 9


def rdb_str(b, i):
    n, i = rdb_len(b, i)
    return b[i:i + n], i + n


def scenario(name, cmds):
    r.delete('s')
    print(f'# {name}')
    for c in cmds:
        r.execute_command(*c)
        print('>', ' '.join(c))
    d = r.dump('s')
    assert d[0] == 19  # RDB_TYPE_STREAM_LISTPACKS_2
    n, i = rdb_len(d, 1)
    for _ in range(n):
        k, i = rdb_str(d, i)
        lp, i = rdb_str(d, i)
        print('node', k.hex(), lp.hex())
    info = r.execute_command('XINFO', 'STREAM', 's')
    print('radix-tree-nodes', info[b'radix-tree-nodes'])
    print('memory-usage', r.execute_command('MEMORY', 'USAGE', 's'))


def xadd(i, *fv):
    return ('XADD', 's', i) + fv


scenario('basic', [xadd('1-1', 'a', '1', 'b', 'hello'), xadd('1-2', 'a', '2', 'b', 'x'),
                   xadd('2-0', 'c', '3'), xadd('2-5', 'a', '100000', 'b', '')])
scenario('xdel', [xadd('1-1', 'a', '1'), xadd('1-2', 'a', '2'), xadd('5-0', 'a', '3'),
                  ('XDEL', 's', '1-2')])
scenario('numeric-fields', [xadd('10-1', '1', 'x', '-5', 'y'), xadd('10-2', '1', 'z', '-5', 'w'),
                            xadd('12-0', '01', 'q')])
scenario('seq-negative-delta', [xadd('5-10', 'f', 'v'), xadd('6-0', 'f', 'v'), xadd('6-3', 'f', 'v')])
scenario('two-nodes', [xadd(f'{i}-0', 'field', f'value{i}') for i in range(1, 106)])
scenario('trim', [xadd(f'{i}-0', 'f', str(i)) for i in range(1, 11)] + [('XTRIM', 's', 'MAXLEN', '7')])
scenario('trim-minid', [xadd(f'{i}-0', 'f', str(i)) for i in range(1, 131)]
         + [('XTRIM', 's', 'MINID', '105-0')])
scenario('big', [xadd('1-0', 'f', 'x' * 5000), xadd('2-0', 'f', 'y')])
scenario('count128', [xadd(f'{i}-0', 'f', 'v') for i in range(1, 131)] + [('XDEL', 's', '3-0')])
scenario('delete-node', [xadd(f'{i}-0', 'f', 'v') for i in range(1, 103)]
         + [('XDEL', 's', '101-0'), ('XDEL', 's', '102-0')])
scenario('many-nodes', [xadd(f'{1000 + i * 7}-{i % 3}', 'k', str(i), 'v', 'x' * (i % 50))
                        for i in range(1, 600)] + [('XDEL', 's', '1007-1', '2000-0', '1700-2')])
