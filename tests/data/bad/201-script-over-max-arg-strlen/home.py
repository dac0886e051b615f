import os, sys
h = sys.argv[1]
os.makedirs(h + '/template')
open(h + '/template/bad.yaml', 'w').write('''base: []
config:
  target:
    service: volcano
    gpus_per_node: 1
    cpus_per_node: 2
    memory: 4Gi
  jobs: [{name: train, sku: G1, instance_count: 1}]
  environment:
    image: busybox
''' + '    setup: [' + 'x' * 140000 + ']\n')
